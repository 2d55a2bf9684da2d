/// What happened to an accepted announcement, sent as one JSON line to clients that asked `"wait": true`.
/// `start` (again after `interrupted`), then exactly one outcome.
public enum AnnouncementEvent: Sendable, Equatable {
    case start
    /// Its turn came but nothing can play it now (no sound server, no sink, the stream corked): it waits,
    /// until its time to live runs out at most.
    case waiting(reason: String)
    /// An urgent announcement cut in; this one will be said again from its start.
    case interrupted
    case done
    case cancelled(reason: String)
    /// Its time to live ran out before its turn.
    case expired
    /// Cut by `max_speech`.
    case cut
    case failed(reason: String)

    public var name: String {
        switch self {
        case .start: "start"
        case .waiting: "waiting"
        case .interrupted: "interrupted"
        case .done: "done"
        case .cancelled: "cancelled"
        case .expired: "expired"
        case .cut: "cut"
        case .failed: "failed"
        }
    }

    /// Whether this is the message's outcome (no more events follow).
    public var isOutcome: Bool {
        switch self {
        case .start, .waiting, .interrupted: false
        default: true
        }
    }

    public var reason: String? {
        switch self {
        case .cancelled(let reason), .failed(let reason), .waiting(let reason): reason
        default: nil
        }
    }

    /// `{"event":"done","number":12,"id":"order-7"}` and a newline.
    public func line(number: UInt64, clientID: String?) -> String {
        var line = "{\"event\":\(JSONText.quote(name)),\"number\":\(number),\"id\":"
        line += clientID.map(JSONText.quote) ?? "null"
        if let reason { line += ",\"reason\":\(JSONText.quote(reason))" }
        return line + "}\n"
    }
}

/// JSON text for replies: strings are quoted with everything outside printable ASCII escaped, so a reply
/// reads the same whatever the connection's `--encoding`.
public enum JSONText {
    public static func quote(_ string: String) -> String {
        var out = "\""
        for unit in string.utf16 {
            switch unit {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default:
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out + "\""
    }
}
