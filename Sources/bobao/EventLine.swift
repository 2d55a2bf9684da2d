import BobaoCore

/// One event line the server sends a connection that asked `"wait": true`, the way
/// `AnnouncementEvent.line(number:clientID:)` writes it:
/// `{"event":"failed","number":12,"id":"order-7","reason":"no sound server"}`.
enum EventLine {
    /// Nil for anything else: a reply, a malformed line, an event name this client does not know.
    static func parse(_ line: String) -> (event: AnnouncementEvent, number: UInt64, id: String?)? {
        guard let json = FlatJSON(line), let name = json.string("event"),
              let numberText = json.number("number"), let number = UInt64(numberText) else { return nil }
        let reason = json.string("reason") ?? ""
        let event: AnnouncementEvent
        switch name {
        case "start": event = .start
        case "waiting": event = .waiting(reason: reason)
        case "interrupted": event = .interrupted
        case "done": event = .done
        case "cancelled": event = .cancelled(reason: reason)
        case "expired": event = .expired
        case "cut": event = .cut
        case "failed": event = .failed(reason: reason)
        default: return nil
        }
        return (event, number, json.string("id"))
    }

    /// `#12 done`, `#12 failed: no sound server`: what `bobao say --wait` prints.
    static func describe(_ event: AnnouncementEvent, number: UInt64) -> String {
        let what: String
        switch event {
        case .start: what = "started"
        case .waiting(let reason): what = "waiting: \(reason)"
        case .interrupted: what = "interrupted by an urgent announcement; it will be said again from its start"
        case .done: what = "done"
        case .cancelled(let reason): what = reason.isEmpty ? "cancelled" : "cancelled: \(reason)"
        case .expired: what = "expired: its ttl ran out before its turn; not spoken"
        case .cut: what = "cut: it spoke for its max_speech"
        case .failed(let reason): what = reason.isEmpty ? "failed" : "failed: \(reason)"
        }
        return "#\(number) \(printable(what))"
    }

    /// The text with control characters (which could drive the terminal) shown as `\u{1B}`.
    static func printable(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x20 || (0x7F...0x9F).contains(value) || (0x202A...0x202E).contains(value)
                || (0x2066...0x2069).contains(value) {
                shown += "\\u{\(String(value, radix: 16, uppercase: true))}"
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }
}
