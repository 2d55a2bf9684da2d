import BobaoAudio
import BobaoCore

/// The one-line status systemd shows (`STATUS=`, in `systemctl status bobao`): the sound server's state, the
/// sink, why it does not play, what waits and what speaks.
///
///     sound: playing, sink alsa_output.usb; queue: 2 waiting; speaking #41
///     sound: connecting (sound server unavailable (Connection refused)); queue: 0 waiting
///     sound: no-sink, sink usb (no sink 'usb' (sinks: null)); queue: 1 waiting; holding #7
///     stopping; sound: playing, sink alsa_output.usb; queue: 0 waiting; speaking #41
enum ServiceStatus {
    /// At most this many characters: the line is for a glance, the `status` command has the rest.
    static let maximumLength = 400

    static func line(output: OutputStatus, board: AnnouncementBoard.Snapshot, stopping: Bool = false) -> String {
        var sound = "sound: \(output.state)"
        if let sink = output.sink { sound += ", sink \(sink)" }
        if output.state != "playing", output.state != "stopped", let why = output.reason ?? output.lastError {
            sound += " (\(why))"
        }
        let waiting = board.waiting.values.reduce(board.storing, +)
        var parts = [sound, "queue: \(waiting) waiting"]
        // The speaker's current one: speaking, or held while the output cannot play (no sound server, corked).
        if let current = board.speaking { parts.append("\(output.state == "playing" ? "speaking" : "holding") #\(current.id)") }
        if stopping { parts.insert("stopping", at: 0) }
        return printable(parts.joined(separator: "; "))
    }

    /// A sink's name or a failure's text on one line: control characters (a newline would end the field and
    /// start another) become spaces; cut to `maximumLength`.
    static func printable(_ text: String) -> String {
        var line = String(String.UnicodeScalarView(text.unicodeScalars.map {
            $0.properties.generalCategory == .control ? " " : $0
        }))
        if line.count > maximumLength { line = String(line.prefix(maximumLength - 1)) + "…" }
        return line
    }
}
