import BobaoCore
import BobaoPlatform
import CLinux
import Dispatch
import Glibc
import Synchronization

/// The TCP side: accepts many clients on one epoll thread and moves bytes between their sockets and their
/// `LineSession`s, which decide what the bytes mean.
///
/// Fair by construction: each round reads at most `readBudget` bytes and takes at most `linesPerRound` lines
/// from a connection; its lines are taken one at a time and stop as soon as its unsent replies pass
/// `outputCap` or too many of its announcements wait for the spool; accepting backs off when descriptors
/// run out. The listener has no process-wide side effects.
public final class LineListener: @unchecked Sendable {
    // Everything but `stopRequested` and the inbox belongs to the listener thread once `start` is called;
    // other threads only call `stop()`, which goes through the inbox's eventfd and the atomic flag.
    // Accepting is in LineListener+Accepting.swift, the limits in ListenerLimits.swift.
    public let boundAddress: String
    let listenSocket: ListeningSocket
    let poll: EventPoll
    private let inbox: CompletionInbox
    private let stopRequested = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    let limits: Limits
    let sessionConfiguration: LineSession.Configuration
    let admits: (String) -> Bool
    private let submit: Submit
    private let perform: Perform
    private let log: (String) -> Void
    /// Told of each connection accepted and closed (the metrics' count).
    let connectionChanged: (ConnectionChange) -> Void
    var ledger: PeerLedger
    var connections: [UInt64: Connection] = [:]
    /// Connections past their final reply, waiting a moment for the client to close: they no longer count
    /// toward `maximumConnections`.
    var lingering = 0
    var nextSerial: UInt64 = 2  // 0 and 1 tag the listening socket and the inbox in epoll
    private let readBuffer: UnsafeMutableRawBufferPointer
    /// When `sweep` next has something to do: the earliest deadline of any connection, the accept back-off,
    /// a refusal summary. An idle server with idle clients sleeps until then, not a moment less.
    private var nextSweepAt = Double.infinity
    var acceptPausedUntil: Double?
    var acceptBackoff = 0.1
    private var loopFaults = 0

    /// Binds and listens at once, so `boundAddress` is known (port 0 picks a free port).
    /// - Parameters:
    ///   - admits: whether a peer address may connect at all; others get `ERR forbidden` and are closed.
    ///   - submit: called on the listener thread for each announcement a session accepts.
    ///   - log: called on the listener thread.
    ///   - connectionChanged: called on the listener thread for each connection accepted (refused ones too:
    ///     they are told why before they close) and for each closed.
    public init(
        address: ListenAddress, limits: Limits = Limits(), session: LineSession.Configuration = .init(),
        ledger: PeerLedger, admits: @escaping (String) -> Bool = { _ in true },
        submit: @escaping Submit,
        perform: @escaping Perform = { _, _, reply in reply("ERR bad-field cmd commands are not served here\n") },
        log: @escaping (String) -> Void = { _ in },
        connectionChanged: @escaping (ConnectionChange) -> Void = { _ in }
    ) throws {
        listenSocket = try ListeningSocket(address)
        boundAddress = listenSocket.boundAddress
        poll = try EventPoll()
        inbox = try CompletionInbox()
        self.limits = limits
        sessionConfiguration = session
        self.ledger = ledger
        self.admits = admits
        self.submit = submit
        self.perform = perform
        self.log = log
        self.connectionChanged = connectionChanged
        readBuffer = .allocate(byteCount: limits.readBudget, alignment: 8)
        try poll.add(listenSocket.descriptor.rawValue, tag: 0, events: EPOLLIN.rawValue)
        try poll.add(inbox.fd, tag: 1, events: EPOLLIN.rawValue)
    }

    deinit { readBuffer.deallocate() }

    /// Starts serving on a dedicated thread.
    public func start() {
        startThread(name: "bobao.listener") { [self] in
            run()
            stopped.signal()
        }
    }

    /// Stops accepting, closes every connection and returns once the listener thread has finished.
    public func stop() {
        guard !stopRequested.exchange(true, ordering: .sequentiallyConsistent) else { return }
        inbox.wake()
        stopped.wait()
    }

    // MARK: The loop

    private func run() {
        let capacity = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        while !stopRequested.load(ordering: .sequentiallyConsistent) {
            let count: Int
            do { count = try poll.wait(events, capacity: capacity, milliseconds: waitMilliseconds()) } catch {
                loopFailed(error)
                continue
            }
            for index in 0..<count {
                let tag = events[index].data.u64, flags = events[index].events
                switch tag {
                case 0: acceptReady()
                case 1: applyCompletions()
                default: if let connection = connections[tag] { service(connection, flags: flags) }
                }
            }
            sweep()
        }
        // Last replies (announcements stored while stopping) go out if the sockets take them; then all close.
        applyCompletions()
        for connection in Array(connections.values) {
            try? connection.send()
            drop(connection)
        }
        ledger.flushSummaries(now: .infinity)
        writeLedgerLog()
    }

    /// Sleeps until something happens or the next deadline.
    private func waitMilliseconds() -> Int32 {
        guard nextSweepAt.isFinite else { return -1 }
        let milliseconds = (nextSweepAt - WallClock.monotonicSeconds()) * 1000
        return Int32(max(0, min(milliseconds.rounded(.up), 3_600_000)))
    }

    /// A new deadline: the sweep runs by then.
    func sweepNoLaterThan(_ deadline: Double) {
        nextSweepAt = min(nextSweepAt, deadline)
    }

    /// An `epoll_wait` failure other than EINTR should not happen; never spin on it.
    private func loopFailed(_ error: SystemError) {
        loopFaults += 1
        if loopFaults == 1 || loopFaults % 1000 == 0 { log(LogPriority.error + "listener: \(error) (\(loopFaults) time(s)); retrying") }
        var pause = timespec(tv_sec: 0, tv_nsec: 100_000_000)
        nanosleep(&pause, nil)
    }

    /// Deadlines: sessions past their auth window or idle timeout, lingering closes, accept back-off,
    /// refusal summaries. Runs when the earliest of them is due, and works out the next.
    private func sweep() {
        let now = WallClock.monotonicSeconds()
        guard now >= nextSweepAt else { return }
        nextSweepAt = .infinity
        if let until = acceptPausedUntil {
            if now >= until {
                acceptPausedUntil = nil
                try? poll.modify(listenSocket.descriptor.rawValue, tag: 0, events: EPOLLIN.rawValue)
            } else {
                sweepNoLaterThan(until)
            }
        }
        for connection in Array(connections.values) {
            if let until = connection.lingerUntil, now >= until {
                drop(connection)
                continue
            }
            // A connection waiting for its messages' events is not idle.
            if connection.waits == 0, now >= connection.session.deadline,
               let action = connection.session.tick(now: now, ledger: &ledger) {
                perform(action, on: connection)
                flush(connection)
            }
            if connections[connection.serial] === connection {
                sweepNoLaterThan(connection.lingerUntil ?? (connection.waits > 0 ? .infinity : connection.session.deadline))
            }
        }
        ledger.flushSummaries(now: now)
        writeLedgerLog()
        nextSweepAt = max(nextSweepAt, now + 0.05)  // deadlines that just passed never make it spin
    }

    func writeLedgerLog() {
        for line in ledger.takeLog() { log(line) }
        // Open summary windows are looked at about once a second.
        if ledger.trackedAddresses > 0 { sweepNoLaterThan(WallClock.monotonicSeconds() + 1) }
    }

    // MARK: Connections

    private func service(_ connection: Connection, flags: UInt32) {
        if connection.lingerUntil != nil {
            discardInput(connection)
        } else if canRead(connection) || flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
            readRound(connection)
        }
        if connections[connection.serial] === connection { flush(connection) }
    }

    private func canRead(_ connection: Connection) -> Bool {
        !connection.readClosed && !connection.session.isClosed && connection.lingerUntil == nil
            && !connection.heldBack && hasRoom(connection)
    }

    /// Reads at most `readBudget` bytes, handing each chunk to the session before reading the next.
    private func readRound(_ connection: Connection) {
        var budget = limits.readBudget
        process(connection)
        while budget > 0 && canRead(connection) {
            let received: Int?
            do {
                received = try Posix.nonBlocking("read") { read(connection.fd, readBuffer.baseAddress, budget) }
            } catch {
                return drop(connection)
            }
            guard let received else { return }
            if received == 0 {
                connection.readClosed = true
                connection.session.receiveEnd()
            } else {
                budget -= received
                connection.session.receive(UnsafeRawBufferPointer(rebasing: readBuffer[..<received]))
            }
            process(connection)
        }
    }

    /// Takes the session's actions, one line at a time, while the connection may have more replies.
    /// Lines still buffered when it stops for the caps are `heldBack` until the replies drain.
    private func process(_ connection: Connection) {
        let now = WallClock.monotonicSeconds()
        connection.heldBack = false
        var budget = limits.linesPerRound
        while hasRoom(connection), let action = connection.session.next(now: now, ledger: &ledger, budget: &budget) {
            perform(action, on: connection)
        }
        if !hasRoom(connection) || budget <= 0 {
            connection.heldBack = !connection.session.isClosed && connection.session.bufferedByteCount > 0
        }
        writeLedgerLog()
    }

    private func hasRoom(_ connection: Connection) -> Bool {
        connection.pendingOutput < limits.outputCap && connection.waitingReplies < limits.maximumWaitingReplies
    }

    private func perform(_ action: LineSession.Action, on connection: Connection) {
        switch action {
        case .reply(let text):
            connection.reply(text)
        case .command(let command):
            let ticket = connection.reserveReply(), serial = connection.serial, inbox = self.inbox
            perform(command, connection.session.peer) { text in
                inbox.post(.init(serial: serial, ticket: ticket, reply: .answered(text)))
            }
        case .announce(let submission):
            if submission.wait {
                guard connection.waits < limits.maximumWaits else {
                    let refusal = LineProtocol.Refusal(
                        code: "too-many-waits", reason: "\(limits.maximumWaits) announcements are awaited on this "
                            + "connection already; wait for their outcomes or use another connection")
                    ledger.refused(refusal, what: "a line", peer: connection.session.peer, host: connection.session.host,
                                   now: WallClock.monotonicSeconds())
                    return connection.reply(LineProtocol.error(refusal))
                }
                connection.waits += 1
            }
            let ticket = connection.reserveReply(), serial = connection.serial, inbox = self.inbox, waited = submission.wait
            submit(submission, connection.session.peer) { reply in
                inbox.post(.init(serial: serial, ticket: ticket, reply: reply, waited: waited))
            }
        case .close(let text):
            if let text { connection.reply(text) }
            connection.finalReplyQueued = true
        }
    }

    private func applyCompletions() {
        let now = WallClock.monotonicSeconds()
        for completion in inbox.take() {
            guard let connection = connections[completion.serial] else { continue }  // the client left; still accepted
            switch completion.reply {
            case .accepted(let number, let duplicate, let watching):
                connection.resolve(completion.ticket, duplicate ? LineProtocol.duplicate(id: number) : LineProtocol.ok(id: number))
                if completion.waited && !watching { endWait(connection, now: now) }
            case .refused(let refusal):
                ledger.refused(refusal, what: "a line", peer: connection.session.peer, host: connection.session.host, now: now)
                connection.resolve(completion.ticket, LineProtocol.error(refusal))
                if completion.waited { endWait(connection, now: now) }
            case .answered(let text):
                connection.resolve(completion.ticket, text)
            case .event(let line, let final):
                connection.reply(line)
                if final { endWait(connection, now: now) }
            case .unwatched:
                endWait(connection, now: now)
            }
            process(connection)
            flush(connection)
        }
        writeLedgerLog()
    }

    /// One of the connection's waits is over; with the last, its idle time starts again.
    private func endWait(_ connection: Connection, now: Double) {
        connection.waits -= 1
        if connection.waits == 0 {
            connection.session.noteActivity(now: now)
            sweepNoLaterThan(connection.session.deadline)
        }
    }

    /// Sends what it can; then decides what to wait for next, or closes a finished connection.
    func flush(_ connection: Connection) {
        do { try connection.send() } catch { return drop(connection) }
        if connection.heldBack && hasRoom(connection) {
            process(connection)  // lines held back for the caps; more of them next round if need be
            do { try connection.send() } catch { return drop(connection) }
        }
        if connection.isDrained && !connection.heldBack {
            if connection.finalReplyQueued && connection.lingerUntil == nil {
                // Half-close, so the client reads the final reply and an end of stream; closing outright with
                // its later bytes unread would reset the connection and could lose the reply.
                shutdown(connection.fd, Int32(SHUT_WR))
                connection.lingerUntil = WallClock.monotonicSeconds() + limits.lingerSeconds
                lingering += 1
                sweepNoLaterThan(connection.lingerUntil!)
            }
            if connection.readClosed && connection.waits == 0
                && (connection.session.isClosed || connection.session.bufferedByteCount == 0) {
                return drop(connection)
            }
        }
        var wanted: UInt32 = 0
        if canRead(connection) || connection.lingerUntil != nil { wanted |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        // EPOLLOUT also brings back a connection whose held-back lines can go on now.
        if connection.hasUnsentOutput || (connection.heldBack && hasRoom(connection)) { wanted |= EPOLLOUT.rawValue }
        if wanted != connection.watched {
            connection.watched = wanted
            try? poll.modify(connection.fd, tag: connection.serial, events: wanted)
        }
    }

    /// After a final reply: reads and drops at most `readBudget` bytes a round until the client closes.
    private func discardInput(_ connection: Connection) {
        do {
            let received = try Posix.nonBlocking("read") { read(connection.fd, readBuffer.baseAddress, readBuffer.count) }
            if received == 0 { drop(connection) }
        } catch {
            drop(connection)
        }
    }

    private func drop(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.serial) != nil else { return }  // its descriptor closes with it
        if connection.lingerUntil != nil { lingering -= 1 }
        connectionChanged(.closed)
    }
}
