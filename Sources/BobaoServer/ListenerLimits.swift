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

        public init() {}
    }

    /// Submits an announcement; the closure passed in is called once with its id or refusal, on any thread.
    public typealias Submit = @Sendable (
        _ text: String, _ peer: String, _ reply: @escaping @Sendable (Result<UInt64, LineProtocol.Refusal>) -> Void
    ) -> Void
}
