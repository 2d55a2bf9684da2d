import BobaoCore

/// A reply line of the line protocol: `OK 12`, `OK 12 duplicate`, `OK cancelled #12`, `ERR queue-full …`.
enum ServerReply: Equatable {
    /// `OK <n>` or `OK <n> duplicate`.
    case accepted(number: UInt64, duplicate: Bool)
    /// `OK` with anything else after it: `OK authenticated`, `OK skipped #12`.
    case ok(String)
    /// `ERR <code> <reason>`.
    case refused(code: String, reason: String)
    /// Not a reply of this protocol (the peer is not a Bobao server).
    case unexpected(String)

    init(_ line: String) {
        if line == "OK" {
            self = .ok("")
        } else if line.hasPrefix("OK ") {
            let words = line.dropFirst(3).split(separator: " ", omittingEmptySubsequences: false)
            if let first = words.first, let number = UInt64(first), words.count == 1 || (words.count == 2 && words[1] == "duplicate") {
                self = .accepted(number: number, duplicate: words.count == 2)
            } else {
                self = .ok(String(line.dropFirst(3)))
            }
        } else if line.hasPrefix("ERR ") {
            let rest = line.dropFirst(4)
            let code = rest.prefix { $0 != " " }
            self = .refused(code: String(code), reason: String(rest.dropFirst(code.count + 1)))
        } else {
            self = .unexpected(line)
        }
    }

    var isOK: Bool {
        switch self {
        case .accepted, .ok: true
        case .refused, .unexpected: false
        }
    }

    /// The reply as one JSON object: `{"ok":true,"number":12}`, `{"ok":true,"number":12,"duplicate":true}`,
    /// `{"ok":true,"message":"skipped #12"}`, `{"ok":false,"code":"queue-full","reason":"…"}`; a line that is
    /// no reply at all is `{"ok":false,"code":"unexpected-reply","reason":<the line>}`.
    var json: String {
        switch self {
        case .accepted(let number, let duplicate):
            "{\"ok\":true,\"number\":\(number)" + (duplicate ? ",\"duplicate\":true}" : "}")
        case .ok(let message):
            "{\"ok\":true,\"message\":\(JSONText.quote(message))}"
        case .refused(let code, let reason):
            "{\"ok\":false,\"code\":\(JSONText.quote(code)),\"reason\":\(JSONText.quote(reason))}"
        case .unexpected(let line):
            "{\"ok\":false,\"code\":\"unexpected-reply\",\"reason\":\(JSONText.quote(line))}"
        }
    }
}
