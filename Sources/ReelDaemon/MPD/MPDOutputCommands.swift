// MPD's output commands, on the core's outputs.

import ReelCore
import ReelModel

/// `outputs`, `enableoutput`, `disableoutput`, `toggleoutput` (MPD's `src/command/OutputCommands.cxx`):
/// the ALSA device is MPD's `alsa` plugin, a pipe its `fifo` plugin. An unknown number is
/// `No such audio output`; turning on an output that is on is not an error. A pipe that cannot
/// be turned on (not a FIFO, not writable) answers with the reason.
enum MPDOutputCommands {
    static func commands(_ context: MPDContext) -> [MPDCommand] {
        let outputs = context.core.outputs
        func switchCommand(
            _ name: String, _ action: @escaping @Sendable (OutputsController, Int, @escaping OutputsController.Reply) -> Void
        ) -> MPDCommand {
            MPDCommand(name, .admin, 1, 1) { request, reply throws(MPDAck) in
                let id = try request.unsigned(0)
                guard outputs.list.contains(where: { $0.id == id }) else {
                    throw MPDAck(.noExist, "No such audio output")
                }
                action(outputs, id) { result in
                    switch result {
                    case .success: reply(.success(MPDResponse()))
                    case .failure(let error): reply(.failure(MPDAck(error)))
                    }
                }
            }
        }
        return [
            .now("outputs", .read, 0, 0) { _ in
                var response = MPDResponse()
                for output in outputs.list {
                    response.field("outputid", output.id)
                    response.field("outputname", output.name)
                    switch output.kind {
                    case .alsa: response.field("plugin", "alsa")
                    case .pipe: response.field("plugin", "fifo")
                    }
                    response.field("outputenabled", output.enabled ? 1 : 0)
                }
                return response
            },
            switchCommand("enableoutput") { $0.enable($1, reply: $2) },
            switchCommand("disableoutput") { $0.disable($1, reply: $2) },
            switchCommand("toggleoutput") { $0.toggle($1, reply: $2) },
        ]
    }
}
