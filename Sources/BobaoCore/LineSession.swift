/// One client connection of the line protocol, without the socket: fed bytes and the time, it says what to
/// do — reply, submit an announcement, carry out a command, close. It owns framing, the connection's
/// encoding, the auth state (with a deadline fixed when the connection was accepted), idleness, the rate
/// limit (through the shared `PeerLedger`), refusal logging and detection of other protocols. The listener
/// only moves bytes.
///
/// `next` hands out one action at a time, so the listener can stop between lines as soon as a client's
/// unsent replies pass their cap, and go on when it has read them.
public struct LineSession: Sendable {
    public struct Configuration: Sendable {
        public var maximumLineBytes = 4096
        /// Clients must send `AUTH <token>` as their first line.
        public var token: String?
        /// Seconds from accept within which an unauthenticated client must have authenticated.
        public var authenticationSeconds = 5.0
        /// Seconds without a line (blank lines do not count) before the connection is closed.
        public var idleTimeoutSeconds = 60.0
        /// Said in the body of the HTTP refusal (where the HTTP port is, once there is one).
        public var httpHint: String?
        /// What lines arrive in (`--encoding`); AUTH, plain and JSON lines alike are converted to UTF-8 first.
        public var encoding = TextEncoding.utf8
        /// The voices and chimes JSON announcements may name.
        public var messageRules = MessageRules()

        public init() {}
    }

    public enum Action: Equatable, Sendable {
        /// Send this text.
        case reply(String)
        /// Submit this announcement; its reply (`OK <id>` or `ERR …`) takes this place among the replies.
        case announce(Submission)
        /// Carry out this command (it was authenticated and rate-limited like an announcement) and reply.
        case command(ClientCommand)
        /// Send this final text, if any, after the replies before it, then close. Nothing more is read.
        case close(String?)
    }

    /// `host:port` of the peer, for logs.
    public let peer: String
    /// The peer's address, for limits and logs that apply per machine.
    public let host: String
    public let isLoopback: Bool
    public let configuration: Configuration
    public private(set) var authenticated: Bool
    /// A close action has been handed out; the session does nothing more.
    public private(set) var isClosed = false
    /// Blank lines received: ignored, unanswered, and not activity.
    public private(set) var blankLines = 0
    private var framer: LineFramer
    private let acceptedAt: Double
    private var lastLineAt: Double
    private var sawFirstBytes = false
    private var sawFirstLine = false
    /// The connection's first bytes after any leading blank space, kept to recognise a request line too long
    /// to be framed (a URL of 5000 bytes).
    private var start: [UInt8] = []
    private var inputEnded = false

    public init(peer: String, host: String, isLoopback: Bool, now: Double, configuration: Configuration) {
        self.peer = peer
        self.host = host
        self.isLoopback = isLoopback
        self.configuration = configuration
        authenticated = configuration.token == nil
        framer = LineFramer(maximumLineBytes: configuration.maximumLineBytes)
        acceptedAt = now
        lastLineAt = now
    }

    /// Bytes received and not yet turned into actions.
    public var bufferedByteCount: Int { framer.bufferedByteCount }

    /// Feeds bytes received from the client.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer) {
        guard !isClosed, !inputEnded, !bytes.isEmpty else { return }
        if !sawFirstLine && start.count < 64 {
            for byte in bytes where start.count < 64 {
                if start.isEmpty && (byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A) { continue }
                start.append(byte)
            }
        }
        framer.append(bytes)
    }

    /// The client closed its sending side: a last line without a newline still counts.
    public mutating func receiveEnd() {
        inputEnded = true
    }

    /// The next thing to do, or nil until more bytes arrive (or, after `receiveEnd`, when all is done).
    /// Each line taken, blank or not, costs one from `budget`; nil also when it runs out, so one client's
    /// flood of blank lines cannot hold the caller for long.
    public mutating func next(now: Double, ledger: inout PeerLedger, budget: inout Int) -> Action? {
        while !isClosed && budget > 0 {
            if !sawFirstBytes, framer.bufferedByteCount >= 2 || inputEnded, let handshake = sniffHandshake() {
                return refuseForeign(handshake, now: now, ledger: &ledger)
            }
            guard let item = framer.next() ?? (inputEnded ? framer.finishItem() : nil) else { return nil }
            budget -= 1
            if let action = handle(item, now: now, ledger: &ledger) { return action }
        }
        return nil
    }

    /// The next thing to do, with no limit on the lines taken for it.
    public mutating func next(now: Double, ledger: inout PeerLedger) -> Action? {
        var budget = Int.max
        return next(now: now, ledger: &ledger, budget: &budget)
    }

    /// The time by which `tick` has something to do, unless a line comes first.
    public var deadline: Double {
        guard !isClosed else { return .infinity }
        if !authenticated { return min(acceptedAt + configuration.authenticationSeconds, lastLineAt + configuration.idleTimeoutSeconds) }
        return lastLineAt + configuration.idleTimeoutSeconds
    }

    /// Closes the session when its deadline has passed: the auth window (from accept, whatever the client
    /// sends meanwhile) or the idle timeout.
    public mutating func tick(now: Double, ledger: inout PeerLedger) -> Action? {
        guard !isClosed, now >= deadline else { return nil }
        let refusal: LineProtocol.Refusal = !authenticated && now >= acceptedAt + configuration.authenticationSeconds
            ? .authTimeout(seconds: configuration.authenticationSeconds)
            : .idle(seconds: configuration.idleTimeoutSeconds)
        ledger.note(code: refusal.code, host: host, now: now) { "closed \(peer): \(refusal.code) (\(refusal.reason))" }
        return close(LineProtocol.error(refusal))
    }

    /// Something other than a line counts as activity (the last event a waiting client was sent): the idle
    /// timeout starts again from `now`.
    public mutating func noteActivity(now: Double) {
        lastLineAt = max(lastLineAt, now)
    }

    // MARK: Lines

    private mutating func sniffHandshake() -> ForeignProtocol? {
        sawFirstBytes = true
        let first = framer.peek(2)
        guard first.count == 2 else { return nil }
        return ForeignProtocol.detectHandshake(first[0], first[1])
    }

    private mutating func handle(_ item: LineFramer.Item, now: Double, ledger: inout PeerLedger) -> Action? {
        let bytes: [UInt8]
        switch item {
        case .tooLong:
            if !sawFirstLine, let foreign = ForeignProtocol.detect(start: start) {
                return refuseForeign(foreign, now: now, ledger: &ledger)
            }
            sawFirstLine = true
            lastLineAt = now
            guard authenticated else { return refuseAndClose(.authRequired, now: now, ledger: &ledger) }
            return refuse(.tooLong(limit: configuration.maximumLineBytes), now: now, ledger: &ledger)
        case .line(let line):
            bytes = line
        }
        if !sawFirstLine {
            if let foreign = ForeignProtocol.detect(firstLine: bytes) {
                return refuseForeign(foreign, now: now, ledger: &ledger)
            }
        }
        // Blank lines are the cheapest flood there is: recognised without decoding.
        if bytes.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }) {
            blankLines += 1
            return nil
        }
        let request = LineProtocol.parse(bytes, encoding: configuration.encoding, rules: configuration.messageRules)
        if case .blank = request {
            blankLines += 1
            return nil
        }
        sawFirstLine = true
        lastLineAt = now
        if !authenticated {
            guard case .auth(let presented) = request else {
                return refuseAndClose(.authRequired, now: now, ledger: &ledger)
            }
            return authenticate(presented, now: now, ledger: &ledger)
        }
        switch request {
        case .blank:
            return nil
        case .auth(let presented):
            guard configuration.token != nil else { return refuse(.authUnexpected, now: now, ledger: &ledger) }
            return authenticate(presented, now: now, ledger: &ledger)
        case .invalid(let refusal):
            return refuse(refusal, now: now, ledger: &ledger)
        case .announce(let text):
            return admit(.announce(Submission(text: text)), now: now, ledger: &ledger)
        case .submission(let submission):
            return admit(.announce(submission), now: now, ledger: &ledger)
        case .command(let command):
            return admit(.command(command), now: now, ledger: &ledger)
        }
    }

    /// `action` if the line is within the client's rate, else the refusal.
    private func admit(_ action: Action, now: Double, ledger: inout PeerLedger) -> Action {
        guard ledger.allowLine(from: host, isLoopback: isLoopback, now: now) else {
            return refuse(.rateLimited(perSecond: ledger.rateLimiter.perSecond), now: now, ledger: &ledger)
        }
        return action
    }

    private mutating func authenticate(_ presented: String?, now: Double, ledger: inout PeerLedger) -> Action {
        guard let token = configuration.token, let presented, SecretComparison.matches(presented, token) else {
            authenticated = false
            return refuseAndClose(.authFailed, now: now, ledger: &ledger)
        }
        authenticated = true
        return .reply(LineProtocol.authenticated)
    }

    private func refuse(_ refusal: LineProtocol.Refusal, now: Double, ledger: inout PeerLedger) -> Action {
        ledger.refused(refusal, what: "a line", peer: peer, host: host, now: now)
        return .reply(LineProtocol.error(refusal))
    }

    private mutating func refuseAndClose(_ refusal: LineProtocol.Refusal, now: Double, ledger: inout PeerLedger) -> Action {
        ledger.refused(refusal, what: "a connection", peer: peer, host: host, now: now)
        return close(LineProtocol.error(refusal))
    }

    private mutating func refuseForeign(_ foreign: ForeignProtocol, now: Double, ledger: inout PeerLedger) -> Action {
        ledger.note(code: "not-line-protocol", host: host, now: now) {
            "refused a connection from \(peer): it spoke \(foreign.name), not the line protocol; nothing was spoken"
        }
        return close(foreign == .http ? ForeignProtocol.httpRefusal(hint: configuration.httpHint) : nil)
    }

    private mutating func close(_ text: String?) -> Action {
        isClosed = true
        return .close(text)
    }
}
