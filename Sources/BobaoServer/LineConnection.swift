import BobaoCore
import CLinux

/// The answer to a line, and whether the connection ends after it.
public struct LineReply {
    public var text: String
    public var close: Bool

    public init(_ text: String, close: Bool = false) {
        self.text = text
        self.close = close
    }
}

/// What the server's handlers know of a client; used on the listener thread only.
public final class Client {
    /// `host:port` of the peer.
    public let peer: String
    /// The peer's address without the port, for limits that apply per machine.
    public let host: String
    /// Refused lines by refusal code, for a summary when the connection ends.
    public var refusals: [String: Int] = [:]
    /// Whether Bobao closed the connection for idleness.
    public var closedIdle = false
    /// Whether the client has presented the token (when one is required).
    public var authenticated = false

    init(peer: String, host: String) {
        self.peer = peer
        self.host = host
    }
}

/// One connection's state; confined to the listener thread.
final class Connection {
    let fd: Int32
    let client: Client
    var framer: LineFramer
    var output: [UInt8] = []
    var outputOffset = 0
    var readClosed = false
    var readingPaused = false
    var watched = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
    var lastActivity = 0.0
    /// A reply ended the conversation: later lines are read and ignored until the client closes.
    var closingAfterReply = false
    var sentFinalReply = false

    init(fd: Int32, client: Client, framer: LineFramer) {
        self.fd = fd
        self.client = client
        self.framer = framer
    }

    var pendingOutput: Int { output.count - outputOffset }
}
