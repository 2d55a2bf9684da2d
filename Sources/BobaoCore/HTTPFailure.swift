/// An HTTP request refused: its status and the JSON body naming the problem, `{"error": CODE, "message": …}`,
/// where CODE is the line protocol's refusal code when there is one (so one client library reads both).
public struct HTTPFailure: Error, Equatable, Sendable {
    public var status: Int
    public var code: String
    public var message: String

    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// A line-protocol refusal with the status that fits it.
    public init(_ refusal: LineProtocol.Refusal) {
        self.init(status: Self.status(for: refusal.code), code: refusal.code, message: refusal.reason)
    }

    static func status(for code: String) -> Int {
        switch code {
        case "too-long": 413
        case "rate-limited": 429
        case "queue-full", "shutting-down", "spool-failed", "busy": 503
        case "not-found": 404
        case "auth-required", "auth-failed": 401
        case "forbidden", "cross-site", "bad-host": 403
        default: 400
        }
    }

    /// The body: one JSON object and a newline.
    public var json: String {
        "{\"error\":\(JSONText.quote(code)),\"message\":\(JSONText.quote(message))}\n"
    }

    public static func tooLarge(limit: Int) -> HTTPFailure {
        HTTPFailure(status: 413, code: "too-long", message: "the body is longer than \(limit) bytes (--max-line)")
    }

    public static func unsupportedType(_ type: String) -> HTTPFailure {
        HTTPFailure(
            status: 415, code: "unsupported-media-type",
            message: "cannot read a body of type \(JSONText.quote(type)): send text/plain, "
                + "application/x-www-form-urlencoded or application/json")
    }

    public static func unknownCharset(_ name: String) -> HTTPFailure {
        HTTPFailure(status: 415, code: "bad-encoding", message: "unknown charset \(JSONText.quote(name))")
    }

    public static func notInCharset(_ name: String) -> HTTPFailure {
        HTTPFailure(status: 400, code: "bad-encoding", message: "the body is not valid \(name)")
    }
}
