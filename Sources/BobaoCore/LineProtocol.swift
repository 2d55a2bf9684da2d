/// Bobao's line protocol: each line of text is an announcement, answered `OK <id>` or `ERR <code> <reason>`.
/// A line whose first non-blank character is `{` is a JSON object instead: an announcement with options,
/// or a command (`JSONRequest`).
public enum LineProtocol {
    /// What a received line asks for.
    public enum Request: Equatable, Sendable {
        /// A plain line: its text, trimmed.
        case announce(String)
        /// A JSON announcement with its options.
        case submission(Submission)
        /// A JSON command.
        case command(ClientCommand)
        /// `AUTH <token>`: the client presents the server's token (only as its first line); nil when what
        /// follows `AUTH ` holds control characters and so cannot be a token.
        case auth(String?)
        /// Blank lines are ignored and not answered.
        case blank
        case invalid(Refusal)
    }

    /// Why a line was refused: a stable code for programs, a reason for people.
    public struct Refusal: Error, Equatable, Sendable {
        public var code: String
        public var reason: String

        public init(code: String, reason: String) {
            self.code = code
            self.reason = reason
        }

        public static func tooLong(limit: Int) -> Refusal {
            Refusal(code: "too-long", reason: "line exceeds \(limit) bytes; the rest of it was discarded")
        }
        public static let badUTF8 = Refusal(code: "bad-utf8", reason: "line is not valid UTF-8")
        public static let controlCharacters = Refusal(
            code: "bad-text", reason: "line holds NUL or other control characters")
        public static func queueFull(capacity: Int) -> Refusal {
            Refusal(code: "queue-full", reason: "\(counted(capacity, "announcement")) already waiting; try again later")
        }
        public static let shuttingDown = Refusal(code: "shutting-down", reason: "the server is stopping")
        public static let forbidden = Refusal(code: "forbidden", reason: "this address may not use this server")
        public static let authRequired = Refusal(code: "auth-required", reason: "send AUTH <token> as the first line")
        public static let authFailed = Refusal(code: "auth-failed", reason: "wrong token")
        public static func authTimeout(seconds: Double) -> Refusal {
            Refusal(code: "auth-timeout", reason: "no AUTH <token> within \(Int(seconds)) s of connecting")
        }

        public static let authUnexpected = Refusal(code: "auth-unexpected", reason: "this server takes no token")
        public static func busy(limit: Int) -> Refusal {
            Refusal(code: "busy", reason: "\(counted(limit, "connection")) open already; try again later")
        }
        public static func idle(seconds: Double) -> Refusal {
            Refusal(code: "idle", reason: "closing after \(Int(seconds)) s without a line")
        }
        public static func rateLimited(perSecond: Double) -> Refusal {
            Refusal(code: "rate-limited", reason: "more than \(counted(Int(perSecond), "line", verb: false)) a second from this address")
        }
        /// A line starting with `{` that is not JSON: `what` says where it breaks.
        public static func badJSON(_ what: String) -> Refusal { Refusal(code: "bad-json", reason: what) }
        /// A JSON line with a field that is unknown, of the wrong type, out of range, given twice or missing:
        /// `ERR bad-field repeat must be a whole number from 1 to 5`.
        public static func badField(_ name: String, _ why: String) -> Refusal {
            Refusal(code: "bad-field", reason: "\(name) \(why)")
        }
        /// A line that is not valid in the connection's `--encoding` (GBK, GB18030).
        public static func badEncoding(_ encoding: TextEncoding) -> Refusal {
            Refusal(code: "bad-encoding", reason: "line is not valid \(encoding.name)")
        }
        /// A command's target does not exist; `reason` is one line.
        public static func notFound(_ reason: String) -> Refusal { Refusal(code: "not-found", reason: reason) }
        /// `{"cmd": "cancel", "id": …}` found nothing waiting or speaking with that client key or number.
        public static func notFound(id: String) -> Refusal {
            notFound("nothing waiting or speaking has id \(JSONText.quote(id))")
        }
    }

    /// Parses one line (terminator already removed) sent in `encoding`; `rules` are what JSON lines are
    /// checked against.
    public static func parse(_ bytes: [UInt8], encoding: TextEncoding = .utf8, rules: MessageRules = MessageRules())
        -> Request
    {
        guard let converted = encoding.utf8(from: bytes) else { return .invalid(.badEncoding(encoding)) }
        guard var text = String(validating: converted, as: UTF8.self) else { return .invalid(.badUTF8) }
        // A byte-order mark, as Windows software writes at the start of a stream, is no text (and must not
        // hide the `{` of a JSON line behind it).
        if text.unicodeScalars.first == "\u{FEFF}" { text = String(text.unicodeScalars.dropFirst()) }
        let trimmed = text.trimmingWhitespace()
        if trimmed.isEmpty { return .blank }
        // Tabs are allowed inside a line; other C0 and C1 controls and DEL are not text to speak. Checked
        // before anything else, AUTH lines included: a token followed by NULs is not the token.
        if trimmed.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || (0x7F...0x9F).contains($0.value) }) {
            return trimmed.hasPrefix("AUTH ") ? .auth(nil) : .invalid(.controlCharacters)
        }
        if trimmed.hasPrefix("AUTH ") { return .auth(String(trimmed.dropFirst(5)).trimmingWhitespace()) }
        if trimmed.hasPrefix("{") {
            let leading = text.unicodeScalars.prefix { $0.properties.isWhitespace }.count
            return JSONRequest.parse(trimmed, leadingCharacters: leading, rules: rules)
        }
        return .announce(trimmed)
    }

    /// `1 announcement is` / `3 announcements are` (or without the verb: `1 line`, `3 lines`).
    static func counted(_ count: Int, _ noun: String, verb: Bool = true) -> String {
        let phrase = count == 1 ? "1 \(noun)" : "\(count) \(noun)s"
        return verb ? phrase + (count == 1 ? " is" : " are") : phrase
    }

    public static func ok(id: UInt64) -> String { "OK \(id)\n" }
    /// A message whose client key was accepted in the last 10 minutes: not queued again.
    public static func duplicate(id: UInt64) -> String { "OK \(id) duplicate\n" }
    public static let authenticated = "OK authenticated\n"
    public static func error(_ refusal: Refusal) -> String { "ERR \(refusal.code) \(refusal.reason)\n" }
}

extension String {
    /// The string without leading and trailing white space (including full-width spaces).
    public func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }
}
