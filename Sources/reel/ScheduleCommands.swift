// schedule: alarms and recordings that start by themselves (`schedules.*`).

import ArgumentParser
import ReelModel
import ReelProtocol

/// `30`, `90s`, `45m`, `1h`, `1h30m`: seconds. Nil for anything else.
func parseSpokenDuration(_ text: String) -> Double? {
    if let seconds = Double(text), seconds.isFinite, seconds >= 0 { return seconds }
    var total = 0.0
    var number = ""
    var sawUnit = false
    for character in text {
        if character.isASCII, character.isNumber || character == "." {
            number.append(character)
            continue
        }
        guard let value = Double(number) else { return nil }
        switch character {
        case "h": total += value * 3600
        case "m": total += value * 60
        case "s": total += value
        default: return nil
        }
        number = ""
        sawUnit = true
    }
    guard number.isEmpty, sawUnit, total.isFinite else { return nil }
    return total
}

struct ScheduleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedule",
        abstract: "Alarms and recordings that start by themselves.",
        discussion: """
            WHEN is one time (2026-12-01 07:30) or a calendar expression as systemd's OnCalendar= \
            writes them (Mon..Fri 07:00, Sat,Sun 09:30, *-*-* 06:30, daily, weekly), in the \
            machine's local time. reeld must be running (the machine on) for a schedule to fire.
            """,
        subcommands: [ScheduleAddCommand.self, ScheduleListCommand.self, ScheduleRemoveCommand.self,
                      ScheduleEnableCommand.self, ScheduleDisableCommand.self],
        defaultSubcommand: ScheduleListCommand.self)
}

extension Output {
    /// `3 [on] Mon..Fri 07:00  play http://radio/stream  next 2026-12-02T07:00:00+01:00  last ok: …`.
    static func scheduleLine(_ schedule: JSONValue) -> String {
        let id = schedule["id"]?.intValue.map(String.init) ?? "?"
        let enabled = schedule["enabled"]?.boolValue == true ? "on" : "off"
        var line = "\(id) [\(enabled)] \(schedule["when"]?.stringValue ?? "")  \(schedule["name"]?.stringValue ?? "")"
        line += "  next " + (schedule["next"]?.stringValue ?? "never")
        if let last = schedule["last"], let result = last["result"]?.stringValue {
            line += "  last \(result) at \(last["at"]?.stringValue ?? ""): \(last["message"]?.stringValue ?? "")"
        }
        return line
    }
}

struct ScheduleAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a schedule: reel schedule add WHEN play|record|stop [TARGET] [options].",
        discussion: """
            play TARGET: a file (absolute path), a URL, or --item/--playlist/--album; --volume, \
            --fade-in, --stop-after. record: --duration, --folder, --name (strftime fields such \
            as %Y-%m-%d), --format. stop: --fade-out. Durations: 90, 90s, 45m, 1h, 1h30m.
            Example: reel schedule add "Mon..Fri 07:00" play http://radio/stream --volume 30 --fade-in 60 --stop-after 1h
            """)

    enum Kind: String, ExpressibleByArgument, CaseIterable { case play, record, stop }

    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the JSON reply.") var json = false
    @Argument(help: "When it fires (quote it: \"Mon..Fri 07:00\").") var when: String
    @Argument(help: "play, record or stop.") var kind: Kind
    @Argument(help: "For play: a file or URL.") var target: String?
    @Option(help: "A recording's item id to play.") var item: String?
    @Option(help: "A stored playlist to play.") var playlist: String?
    @Option(help: "An album to play.") var album: String?
    @Option(help: "Volume 0–100 set before playing.") var volume: Int?
    @Option(name: .customLong("fade-in"), help: "Fade in over this long.") var fadeIn: String?
    @Option(name: .customLong("stop-after"), help: "Stop after this long.") var stopAfter: String?
    @Option(help: "How long to record.") var duration: String?
    @Option(help: "The tree folder to record into (/Radio).") var folder: String?
    @Option(name: .customLong("name"), help: "The recording's name (strftime fields filled in).") var recordingName: String?
    @Option(help: "The recording's format (flac, wav, ogg, opus).") var format: String?
    @Option(name: .customLong("fade-out"), help: "Fade out over this long before stopping.") var fadeOut: String?
    @Option(name: .customLong("title"), help: "The schedule's name.") var title: String?
    @Flag(help: "Add it disabled.") var disabled = false

    func seconds(_ text: String?, _ option: String) throws -> JSONValue? {
        guard let text else { return nil }
        guard let seconds = parseSpokenDuration(text) else {
            throw ValidationError("--\(option) must be a duration such as 90, 90s, 45m, 1h or 1h30m, not \"\(text)\"")
        }
        return .double(seconds)
    }

    func action() throws -> JSONValue {
        var body: JSONObject = [:]
        switch kind {
        case .play:
            var targets: [(String, String)] = []
            if let target { targets.append((target.contains("://") ? "url" : "file", target)) }
            if let item { targets.append(("item", item)) }
            if let playlist { targets.append(("playlist", playlist)) }
            if let album { targets.append(("album", album)) }
            guard targets.count == 1 else { throw ValidationError("play needs one thing to play: a file or URL, or --item, --playlist or --album") }
            body[targets[0].0] = .string(targets[0].1)
            if let volume { body["volume"] = .int(Int64(volume)) }
            if let value = try seconds(fadeIn, "fade-in") { body["fadeIn"] = value }
            if let value = try seconds(stopAfter, "stop-after") { body["stopAfter"] = value }
        case .record:
            guard target == nil else { throw ValidationError("record takes no file or URL (the capture device records)") }
            guard let value = try seconds(duration, "duration") else { throw ValidationError("record needs --duration (such as 1h)") }
            body["duration"] = value
            if let folder { body["folderPath"] = .string(folder) }
            if let recordingName { body["name"] = .string(recordingName) }
            if let format { body["format"] = .string(format) }
        case .stop:
            guard target == nil else { throw ValidationError("stop takes no file or URL") }
            if let value = try seconds(fadeOut, "fade-out") { body["fadeOut"] = value }
        }
        return [kind.rawValue: .object(body)]
    }

    func run() throws {
        var params: JSONObject = ["when": .string(when), "action": try action()]
        if let title { params["name"] = .string(title) }
        if disabled { params["enabled"] = .bool(false) }
        let client = try connection.connect()
        let result = try client.call("schedules.add", params)
        Output.line(json ? result.jsonString : Output.scheduleLine(result))
    }
}

struct ScheduleListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the schedules, with their next and last run.")
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the JSON reply.") var json = false

    func run() throws {
        let result = try connection.connect().call("schedules.list", [:])
        if json {
            Output.line(result.jsonString)
            return
        }
        let schedules = result["schedules"]?.arrayValue ?? []
        if schedules.isEmpty { Output.line("no schedules") }
        for schedule in schedules { Output.line(Output.scheduleLine(schedule)) }
    }
}

struct ScheduleRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a schedule.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The schedule's id (reel schedule list).") var id: Int

    func run() throws {
        _ = try connection.connect().call("schedules.remove", ["id": .int(Int64(id))])
    }
}

struct ScheduleEnableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "enable", abstract: "Enable a schedule.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The schedule's id.") var id: Int

    func run() throws {
        let result = try connection.connect().call("schedules.update", ["id": .int(Int64(id)), "enabled": true])
        Output.line(Output.scheduleLine(result))
    }
}

struct ScheduleDisableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "disable", abstract: "Disable a schedule.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The schedule's id.") var id: Int

    func run() throws {
        let result = try connection.connect().call("schedules.update", ["id": .int(Int64(id)), "enabled": false])
        Output.line(Output.scheduleLine(result))
    }
}
