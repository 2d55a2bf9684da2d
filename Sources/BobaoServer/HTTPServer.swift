import BobaoAudio
import BobaoCore
import BobaoPlatform
import CMicroHTTPD
import Dispatch
import Glibc
import Synchronization

/// The HTTP port (`--http`): webhooks, the web console, metrics. libmicrohttpd parses HTTP and runs one
/// polling thread (on poll(): see http_daemon.c); requests that answer later (an announcement stored in the spool, `?wait=1`,
/// `/events`) suspend their connection until the answer comes, so a slow request holds no thread.
/// Routes are in HTTPServer+Routes.swift, server-sent events in HTTPEventStream.swift.
public final class HTTPServer: Sendable {
    public struct Settings: Sendable {
        public var address: ListenAddress
        /// The longest body accepted (`--max-line`); longer ones get 413.
        public var maximumBodyBytes = 4096
        public var maximumConnections = 512
        /// A connection idle this long is closed (keep-alive between requests, a stalled upload).
        public var idleTimeoutSeconds = 60.0
        public var access = AccessPolicy()
        public var messageRules = MessageRules()
        /// What a body that names no charset is in (`--encoding`).
        public var encoding = TextEncoding.utf8
        public var linesPerSecondPerPeer = 20.0
        public var burstPerPeer = 40.0
        public var rateLimitLoopback = false
        /// Server-sent event streams open at once at most; the next gets 503.
        public var maximumEventStreams = 64

        public init(address: ListenAddress) {
            self.address = address
        }
    }

    /// What the routes serve, from the rest of the server.
    public struct Services: Sendable {
        var submit: LineListener.Submit
        var perform: LineListener.Perform
        /// The sound server's state and why it cannot play, if it cannot.
        var sound: @Sendable () -> OutputStatus
        /// `{"announcements": […]}`.
        var announcements: @Sendable () -> String
        /// The Prometheus exposition.
        var metrics: @Sendable () -> String
        /// Starts sending event-stream text to the closure; returns what `unsubscribe` takes.
        var subscribe: @Sendable (_ send: @escaping @Sendable (String) -> Void) -> UInt64
        var unsubscribe: @Sendable (UInt64) -> Void
        /// Counts connections and refusals (metrics).
        var connectionOpened: @Sendable () -> Void = {}
        var connectionClosed: @Sendable () -> Void = {}
        var refused: @Sendable (String) -> Void = { _ in }
    }

    public let boundAddress: String
    let settings: Settings
    let services: Services
    let log: @Sendable (String) -> Void
    let ledger: Mutex<PeerLedger>
    /// Without a token: only requests addressed to an address, localhost or a local name (see `HTTPAccess`).
    let checksHost: Bool
    private let listenDescriptor: Int32
    private let daemon = Mutex<Daemon?>(nil)
    /// Requests waiting on another thread, and open event streams: answered and ended at `stop`.
    let pending = Mutex<[ObjectIdentifier: HTTPExchange]>([:])
    let streams = Mutex<[StreamKey: HTTPEventStream]>([:])
    let stopping = Atomic<Bool>(false)
    /// Open connections by peer address (not loopback's), for the per-address limit.
    let connectionsByAddress = Mutex<[String: Int]>([:])
    /// Signalled when the last pending request is done after `stop` began.
    private let drained = DispatchSemaphore(value: 0)
    /// Every 15 s a comment goes to every event stream: a client that went away (a phone that slept) is
    /// found by the failed write and its stream closed, rather than held until the next event.
    private let heartbeatStop = DispatchSemaphore(value: 0)
    static let heartbeatSeconds = 15

    /// libmicrohttpd, opened for `--http` only, is not there.
    public struct LibraryMissing: Error, CustomStringConvertible {
        public var detail: String
        public var description: String {
            "--http needs libmicrohttpd (Debian: apt install libmicrohttpd12): \(detail)"
        }
    }

    private struct Daemon: @unchecked Sendable {
        let pointer: OpaquePointer
        let logger: UnsafeMutablePointer<bobao_http_logger>
    }

    /// Binds at once (port 0 picks a free port); serving starts with `start`. Whether the address may be
    /// served at all was checked before (`AnnouncementServer.checkAccess`, which covers `--http` too).
    /// - Throws: `LibraryMissing`, or the socket's error.
    init(settings: Settings, services: Services, log: @escaping @Sendable (String) -> Void) throws {
        if let problem = bobao_http_load() {
            throw LibraryMissing(detail: String(cString: problem))
        }
        let socket = try ListeningSocket(settings.address)
        boundAddress = socket.boundAddress
        listenDescriptor = fcntl(socket.descriptor.rawValue, F_DUPFD_CLOEXEC, 0)  // the daemon closes its own
        guard listenDescriptor >= 0 else { throw SystemError(call: "dup", errno: errno) }
        self.settings = settings
        self.services = services
        self.log = log
        checksHost = settings.access.token == nil
        ledger = Mutex(PeerLedger(
            rateLimiter: RateLimiter(perSecond: settings.linesPerSecondPerPeer, burst: settings.burstPerPeer),
            rateLimitLoopback: settings.rateLimitLoopback, refusalTap: services.refused))
    }

    /// Starts libmicrohttpd's thread.
    func start() throws {
        let logger = UnsafeMutablePointer<bobao_http_logger>.allocate(capacity: 1)
        let context = Unmanaged.passUnretained(self).toOpaque()
        logger.initialize(to: bobao_http_logger(line: { context, text in
            Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue().libraryMessage(String(cString: text!))
        }, context: context))
        let pointer = bobao_http_start(
            listenDescriptor, UInt32(settings.maximumConnections),
            UInt32(max(1, settings.idleTimeoutSeconds.rounded(.up))), 64 * 1024,
            { context, address, _ in
                guard let address else { return .NO }
                return Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue().admitsConnection(from: address) ? .YES : .NO
            }, context,
            { context, connection, url, method, _, upload, uploadSize, slot in
                let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
                return server.handle(connection!, url: url, method: method, upload: upload, size: uploadSize!, slot: slot!)
            }, context,
            { context, _, slot, _ in
                guard let slot, let raw = slot.pointee else { return }
                let exchange = Unmanaged<HTTPExchange>.fromOpaque(raw).takeRetainedValue()
                slot.pointee = nil
                Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue().finished(exchange)
            }, context,
            { context, connection, slot, code in
                let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
                if code.rawValue == 0 /* MHD_CONNECTION_NOTIFY_STARTED */ {
                    server.connectionStarted(connection!, slot: slot!)
                } else {
                    server.connectionClosed(slot: slot!)
                }
            }, context,
            logger)
        guard let pointer else {
            let error = errno
            logger.deallocate()
            close(listenDescriptor)
            throw SystemError(call: "start the HTTP server on \(settings.address)", errno: error)
        }
        daemon.withLock { $0 = Daemon(pointer: pointer, logger: logger) }
        startThread(name: "bobao.http") { [self] in
            while heartbeatStop.wait(timeout: .now() + .seconds(Self.heartbeatSeconds)) == .timedOut {
                for stream in streams.withLock({ Array($0.values) }) { stream.send(": keep-alive\n\n") }
                note { $0.flushSummaries(now: WallClock.monotonicSeconds()) }
            }
        }
    }

    /// Answers what still waits (`503 shutting-down`), ends the event streams, and stops the daemon.
    func stop() {
        guard !stopping.exchange(true, ordering: .sequentiallyConsistent) else { return }
        heartbeatStop.signal()
        let waiting = pending.withLock { Array($0.values) }
        // Those still waiting were accepted (a `?wait=1`) or are being stored: what was accepted is kept in the
        // spool and said after the next start, or logged as not spoken without one.
        let stopped = HTTPFailure(status: 503, code: "shutting-down",
            message: "the server is stopping before the answer: an accepted announcement stays in the spool and is "
                + "said after the next start (without a spool it is logged as not spoken)")
        for exchange in waiting { exchange.deliver(.failure(stopped)) }
        let open = streams.withLock { Array($0.values) }
        for stream in open { stream.end() }
        // Let the answers just given go out (a second at most) before the daemon closes every connection.
        if !waiting.isEmpty && !pending.withLock({ $0.isEmpty }) { _ = drained.wait(timeout: .now() + 1) }
        guard let daemon = daemon.withLock({ $0.take() }) else { return }
        bobao_mhd_stop_daemon(daemon.pointer)
        daemon.logger.deallocate()
    }

    // MARK: The access handler, on libmicrohttpd's thread

    private func handle(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
        upload: UnsafePointer<CChar>?, size: UnsafeMutablePointer<Int>, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let raw = slot.pointee else {
            // The headers have arrived: refuse now what can be refused before the body is read.
            let peerAddress = bobao_http_client_address(connection).map(Self.socketAddress)
            let exchange = HTTPExchange(
                connection: connection, method: method.map { String(cString: $0) } ?? "GET",
                path: url.map { String(cString: $0) } ?? "/", peer: peerAddress?.description ?? "?",
                host: peerAddress?.host ?? "?", isLoopback: peerAddress.map { AddressRange.isLoopback($0.host) } ?? false)
            slot.pointee = Unmanaged.passRetained(exchange).toOpaque()
            if let refusal = check(exchange) { return answer(exchange, refusal) }
            return .YES
        }
        let exchange = Unmanaged<HTTPExchange>.fromOpaque(raw).takeUnretainedValue()
        if size.pointee > 0 {
            let bytes = UnsafeRawBufferPointer(start: upload, count: size.pointee)
            size.pointee = 0
            if exchange.state.withLock({ $0.answered }) { return .YES }
            // Too long a body (sent chunked, so its length was not known before): the rest is read and dropped,
            // and the 413 goes out once it has all arrived (libmicrohttpd takes no answer in the middle of an
            // upload); a body that goes on past a mebibyte more closes the connection.
            guard exchange.append(bytes, limit: settings.maximumBodyBytes, discardLimit: 1 << 20) else {
                _ = refuse(exchange, HTTPFailure(status: 413, code: "too-long",
                    message: "the body went on more than 1 MiB past --max-line (\(settings.maximumBodyBytes) bytes); "
                        + "the connection was closed"))
                return .NO
            }
            return .YES
        }
        let (answered, dispatched) = exchange.state.withLock { ($0.answered, $0.dispatched) }
        if answered { return .YES }
        if dispatched { return exchange.queueOrSuspend() }  // resumed with its answer
        exchange.state.withLock { $0.dispatched = true }
        switch route(exchange) {
        case .now(let response):
            return answer(exchange, response)
        case .later:
            pending.withLock { $0[ObjectIdentifier(exchange)] = exchange }
            if stopping.load(ordering: .sequentiallyConsistent) { exchange.deliver(.failure(HTTPFailure(.shuttingDown))) }
            return exchange.queueOrSuspend()
        case .stream(let stream):
            return stream.queue(on: connection)
        }
    }

    /// libmicrohttpd's own messages: a client that went away is normal (not logged); connections refused
    /// at the limit are counted and summed up like other refusals; anything else is a warning, logged once
    /// a minute at most with the rest counted.
    private func libraryMessage(_ text: String) {
        let lower = text.lowercased()
        // "Application reported internal error": a connection this server chose to close (a body far too long),
        // already logged as a refusal.
        if lower.contains("failed to send") || lower.contains("application reported internal error") || lower.contains("connection reset") || lower.contains("broken pipe")
            || lower.contains("closed by remote") || lower.contains("socket has been closed") {
            return
        }
        let code = lower.contains("connection limit") ? "busy" : "http-library"
        noteRefusal(code: code, host: "the HTTP port") {
            code == "busy"
                ? "refused an HTTP connection: \(settings.maximumConnections) connections (--max-connections; half of "
                    + "them per address) are open already; the client's connection was closed"
                : LogPriority.warning + "HTTP: " + text
        }
    }

    /// Changes the refusal ledger and logs what it then has to say (first refusals, summaries).
    func note(_ change: (inout PeerLedger) -> Void) {
        let lines = ledger.withLock { ledger -> [String] in
            change(&ledger)
            return ledger.takeLog()
        }
        for line in lines { log(line) }
    }

    /// Counts a refusal of `code` from `host`; logged the first time in the ledger's window, then summed up.
    func noteRefusal(code: String, host: String, _ message: () -> String) {
        note { $0.note(code: code, host: host, now: WallClock.monotonicSeconds(), message: message) }
    }

    private func answer(_ exchange: HTTPExchange, _ response: HTTPResponse) -> MHD_Result {
        exchange.state.withLock { $0.answered = true }
        return response.queue(on: exchange.connection)
    }

    private func finished(_ exchange: HTTPExchange) {
        let empty = pending.withLock { pending -> Bool in
            guard pending.removeValue(forKey: ObjectIdentifier(exchange)) != nil else { return false }
            return pending.isEmpty
        }
        if empty && stopping.load(ordering: .sequentiallyConsistent) { drained.signal() }
    }
}
