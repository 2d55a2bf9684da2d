import BobaoPlatform
import BobaoServer

/// `bobao status`: asks a running server `{"cmd":"status"}` and prints a readable summary, or the JSON line
/// as it came with `--json`.
enum StatusCommand {
    static let usage = """
        usage: bobao status [--to HOST:PORT] [--token SECRET] [--json]
        \(CommandClient.optionsUsage)
          --json                print the server's status line as it is: one JSON object
        Exit status: 0 when the status was printed, 1 if the server refused or was unreachable, 2 for bad usage.
        """

    static func run(_ arguments: [String]) throws {
        let args = try Arguments(arguments, valued: CommandClient.valuedOptions, switches: ["json"])
        guard args.positional.isEmpty else { throw CommandError.usage("unexpected argument '\(args.positional[0])'") }
        let reply = try CommandClient.exchange(args, command: "status", line: "{\"cmd\":\"status\"}")
        guard reply.hasPrefix("{") else {
            StandardStreams.writeOutput(reply + "\n")
            let refused = if case .refused = ServerReply(reply) { true } else { false }
            throw CommandError(description: refused ? "the server refused the command" : "the reply is not a status report")
        }
        // A line this client cannot read is still worth seeing as it is.
        guard !args.flag("json"), let status = FlatJSON(reply) else { return StandardStreams.writeOutput(reply + "\n") }
        StandardStreams.writeOutput(summary(status))
    }

    /// ```
    /// Bobao 0.9.0, up 2 h 5 min
    /// sound:      playing on alsa_output.pci-0000_00_1f.3.analog-stereo
    ///             (or: no-sink on usb_speaker: no sink 'usb_speaker' (sinks: auto_null); corked on … : corked by …)
    /// volume:     70 % (set by bobao volume)
    /// queue:      1 urgent, 3 normal, 0 low waiting (4 of 256; 0 being stored)
    /// speaking:   #12, urgent, id "order-7": "新客户来了"
    /// counters:   30 accepted, 2 duplicate, 1 refused, 25 done, …
    /// last error: no sound server (2026-11-30T22:10:36.000Z)
    /// ```
    static func summary(_ status: FlatJSON) -> String {
        func text(_ path: String) -> String { status.string(path) ?? status.number(path) ?? "?" }
        var lines: [String] = []
        let uptime = status.number("uptime_s").flatMap { Int($0) }.map(duration) ?? "?"
        lines.append("Bobao \(text("version")), up \(uptime)")
        var sound = text("sound.state")
        if let sink = status.string("sound.sink") { sound += " on \(sink)" }
        if let reason = status.string("sound.reason") { sound += ": \(reason)" }
        if let error = status.string("sound.last_error"), error != status.string("sound.reason") {
            sound += " (last failure: \(error))"
        }
        lines.append("sound:      " + sound)
        switch status["sound.volume"] {
        case .number(let percent)?: lines.append("volume:     \(percent) % (set by bobao volume)")
        case .null?: lines.append("volume:     not set (the sound server's own)")
        default: break  // a server from before the volume command
        }
        lines.append("queue:      \(text("queue.urgent")) urgent, \(text("queue.normal")) normal, \(text("queue.low")) low waiting"
            + " (\(text("queue.total")) of \(text("queue.capacity")); \(text("queue.storing")) being stored)")
        if let number = status.number("speaking.number") {
            var speaking = "#\(number), \(text("speaking.priority"))"
            if let key = status.string("speaking.id") { speaking += ", id \(EventLog.quote(key))" }
            lines.append("speaking:   \(speaking): \(EventLog.quote(text("speaking.text")))")
        } else {
            lines.append("speaking:   nothing")
        }
        let counters = status.leaves.compactMap { leaf -> String? in
            guard leaf.path.hasPrefix("counters."), case .number(let count) = leaf.value else { return nil }
            return "\(count) \(leaf.path.dropFirst("counters.".count))"
        }
        lines.append("counters:   " + (counters.isEmpty ? "?" : counters.joined(separator: ", ")))
        if let message = status.string("last_error.message") {
            let at = status.number("last_error.at_ms").flatMap { Int64($0) }.map { " (\(WallClock.iso8601(milliseconds: $0)))" }
            lines.append("last error: \(message)\(at ?? "")")
        } else {
            lines.append("last error: none")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `42 s`, `5 min 3 s`, `2 h 5 min`, `3 d 4 h`.
    static func duration(_ seconds: Int) -> String {
        let (days, hours, minutes) = (seconds / 86_400, seconds / 3600 % 24, seconds / 60 % 60)
        if days > 0 { return "\(days) d \(hours) h" }
        if hours > 0 { return "\(hours) h \(minutes) min" }
        if minutes > 0 { return "\(minutes) min \(seconds % 60) s" }
        return "\(seconds) s"
    }
}
