import BobaoAudio
import BobaoCore

/// The one JSON line `{"cmd": "status"}` answers: version, uptime, the sound server and sink (with the sinks
/// there are, why it is not playing: `no-sink`, `corked`, and the stream volume), the queue by priority, what is
/// speaking, counters by outcome, the last error. Everything outside printable ASCII is escaped, so it reads
/// the same whatever `--encoding` the connection uses.
enum StatusReport {
    /// `volume`: the stream volume a client set (`bobao volume`), or nil (`null`: the sound server's own).
    static func line(uptimeSeconds: Double, output: OutputStatus, volume: Int?, board: AnnouncementBoard.Snapshot) -> String {
        func string(_ value: String?) -> String { value.map(JSONText.quote) ?? "null" }
        var fields: [String] = []
        fields.append("\"version\":\(JSONText.quote(BobaoVersion.current))")
        fields.append("\"uptime_s\":\(Int(uptimeSeconds.rounded(.down)))")
        let sinks = output.sinks.map { "[" + $0.map(JSONText.quote).joined(separator: ",") + "]" } ?? "null"
        fields.append("\"sound\":{\"state\":\(string(output.state)),\"sink\":\(string(output.sink)),"
            + "\"sinks\":\(sinks),\"reason\":\(string(output.reason)),\"last_error\":\(string(output.lastError)),"
            + "\"volume\":\(volume.map(String.init) ?? "null")}")
        let waiting = Priority.allCases.map { "\"\($0.rawValue)\":\(board.waiting[$0] ?? 0)" }.joined(separator: ",")
        let total = board.waiting.values.reduce(board.storing, +)
        fields.append("\"queue\":{\(waiting),\"storing\":\(board.storing),\"total\":\(total),\"capacity\":\(board.capacity)}")
        if let speaking = board.speaking {
            fields.append("\"speaking\":{\"number\":\(speaking.id),\"id\":\(string(speaking.options.clientID)),"
                + "\"priority\":\(JSONText.quote(speaking.priority.rawValue)),\"text\":\(JSONText.quote(speaking.text))}")
        } else {
            fields.append("\"speaking\":null")
        }
        let names = ["accepted", "duplicate", "refused", "done", "cut", "expired", "cancelled", "failed", "interrupted"]
        fields.append("\"counters\":{" + names.map { "\"\($0)\":\(board.counters[$0] ?? 0)" }.joined(separator: ",") + "}")
        if let message = board.lastError ?? output.lastError {
            let at = board.lastError == nil ? "null" : board.lastErrorAt.map(String.init) ?? "null"
            fields.append("\"last_error\":{\"message\":\(JSONText.quote(message)),\"at_ms\":\(at)}")
        } else {
            fields.append("\"last_error\":null")
        }
        return "{" + fields.joined(separator: ",") + "}\n"
    }
}
