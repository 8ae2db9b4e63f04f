// MPD's connection and server commands: ping, close, idle, password, commands, tagtypes, and the lists clients read at connect.

import ReelCore

/// Commands about the connection and the server: `ping`, `close` and `idle` (carried out by
/// `MPDConnection` itself; listed here for `commands` and the permission check), `password`,
/// `commands`, `notcommands`, `tagtypes` and its subcommands, `binarylimit`, `urlhandlers`,
/// `decoders`.
enum MPDConnectionCommands {
    static func commands(_ context: MPDContext) -> [MPDCommand] {
        let noop: @Sendable (MPDRequest, @escaping MPDReply) -> Void = { _, reply in reply(.success(MPDResponse())) }
        return [
            .now("ping", [], 0, 0) { _ in MPDResponse() },
            MPDCommand("close", [], 0, nil, noop),
            MPDCommand("idle", .read, 0, nil, noop),
            .now("password", [], 1, 1) { request throws(MPDAck) in
                guard let password = context.password, request[0] == password else {
                    throw MPDAck(.password, "incorrect password")
                }
                request.client.permission = .all
                return MPDResponse()
            },
            MPDCommand("commands", [], 0, 0) { request, reply in
                reply(.success(list(request.table, permitted: true, for: request.client)))
            },
            MPDCommand("notcommands", [], 0, 0) { request, reply in
                reply(.success(list(request.table, permitted: false, for: request.client)))
            },
            .now("tagtypes", [], 0, nil) { request throws(MPDAck) in try tagtypes(request) },
            .now("binarylimit", [], 1, 1) { request throws(MPDAck) in
                let limit = try request.unsigned(0)
                guard limit >= 64 else { throw MPDAck(.argument, "Value too small") }
                request.client.binaryLimit = limit
                return MPDResponse()
            },
            .now("urlhandlers", .read, 0, 0) { request in
                var response = MPDResponse()
                if request.client.isLocal { response.field("handler", "file://") }
                for scheme in PlayerController.urlSchemes { response.field("handler", "\(scheme)://") }
                return response
            },
            .now("decoders", .read, 0, 0) { _ in decoders },
        ]
    }

    /// `commands` (what this client may run) or `notcommands` (what it may not), by name.
    private static func list(_ table: MPDCommandTable, permitted: Bool, for client: MPDClient) -> MPDResponse {
        var response = MPDResponse()
        for command in table.sorted
        where client.permission.isSuperset(of: command.permission) == permitted {
            response.field("command", command.name)
        }
        return response
    }

    /// `tagtypes` lists the enabled tags; `clear`, `all`, `enable T…`, `disable T…` change them.
    private static func tagtypes(_ request: MPDRequest) throws(MPDAck) -> MPDResponse {
        var response = MPDResponse()
        guard request.count > 0 else {
            for name in request.client.tags.names { response.field("tagtype", name) }
            return response
        }
        let names = Array(request.arguments.dropFirst())
        switch request[0] {
        case "clear", "all":
            guard names.isEmpty else { throw MPDAck(.argument, "Too many arguments") }
            request.client.tags = request[0] == "clear" ? .none : .all
        case "enable", "disable":
            guard !names.isEmpty else { throw MPDAck(.argument, "Not enough arguments") }
            var tags: [String] = []
            for name in names {
                guard let tag = MPDTag.mpdName(name) else { throw MPDAck(.argument, "Unknown tag type") }
                tags.append(tag)
            }
            if request[0] == "enable" { request.client.tags.enable(tags) } else { request.client.tags.disable(tags) }
        default:
            throw MPDAck(.argument, "Unknown sub command")
        }
        return response
    }

    /// The decoders Reel plays with, one `plugin` per codec of the registry, each with its
    /// suffixes and MIME types (MPD lists one per decoder plugin).
    private static let decoders: MPDResponse = {
        var response = MPDResponse()
        for codec in Codecs.decoders {
            response.field("plugin", codec.name)
            for suffix in codec.suffixes { response.field("suffix", suffix) }
            for mime in codec.mimeTypes { response.field("mime_type", mime) }
        }
        return response
    }()
}
