import BobaoCore

extension LineListener {
    public struct Limits: Sendable {
        public var maximumConnections = 512
        /// Bytes read from one connection per round of the loop.
        public var readBudget = 16 * 1024
        /// Unsent reply bytes at which a connection's lines stop being read.
        public var outputCap = 16 * 1024
        /// Announcements of one connection waiting for the spool at which its lines stop being read.
        public var maximumWaitingReplies = 64
        /// Lines (blank ones too) taken from one connection per round.
        public var linesPerRound = 64
        /// After a final reply, how long the rest of what a client sends is read and dropped before closing.
        public var lingerSeconds = 2.0
        /// Announcements one connection may await with `"wait": true` at once; the next is refused
        /// `ERR too-many-waits` (each costs the server a watcher until its outcome).
        public var maximumWaits = 256

        public init() {}
    }

    /// What a submission's reply closure is told, on any thread: first its answer, then (for a message sent
    /// with `"wait": true` that was accepted) its events, up to and including its outcome.
    public enum SubmitReply: Sendable, Equatable {
        /// `watching`: events follow, the last with `final` (or `.unwatched`).
        case accepted(number: UInt64, duplicate: Bool, watching: Bool)
        case refused(LineProtocol.Refusal)
        /// One event line (JSON, ending in a newline); `final` for the message's outcome.
        case event(String, final: Bool)
        /// No events will come after all (a duplicate whose outcome is unknown).
        case unwatched
        /// A command's reply line (newline included).
        case answered(String)
    }

    /// Submits an announcement; the closure passed in is called with its number or refusal, and then with its
    /// events if it was accepted with `watching`, on any thread, in order.
    public typealias Submit = @Sendable (
        _ submission: Submission, _ peer: String, _ reply: @escaping @Sendable (SubmitReply) -> Void
    ) -> Void

    /// Carries out a command from `peer` and passes its reply (one line, newline included) to the closure,
    /// at once or later from any thread (a command waits for the announcements acknowledged before it to be
    /// queued). Called on the listener thread: it must not block.
    public typealias Perform = @Sendable (
        _ command: ClientCommand, _ peer: String, _ reply: @escaping @Sendable (String) -> Void
    ) -> Void
}
