import BobaoCore
import BobaoPlatform
import CLinux
import Glibc

/// Taking new connections: admission (address, connection limit), and a back-off when descriptors run out.
extension LineListener {
    /// What `connectionChanged` is told.
    public enum ConnectionChange: Sendable, Equatable {
        case opened, closed
    }

    func acceptReady() {
        for _ in 0..<64 {  // the rest next round: accepting must not starve the connections
            switch listenSocket.accept() {
            case .none: return
            case .exhausted(let error): return pauseAccepting(error)
            case .connection(let descriptor, let address):
                acceptBackoff = 0.1
                admit(descriptor, from: address)
            }
        }
    }

    func admit(_ descriptor: consuming FileDescriptor, from address: SocketAddress) {
        let now = WallClock.monotonicSeconds()
        let host = address.host
        connectionChanged(.opened)
        let refusal: LineProtocol.Refusal? = !admits(host) ? .forbidden
            : connections.count - lingering >= limits.maximumConnections ? .busy(limit: limits.maximumConnections) : nil
        if let refusal {
            ledger.refused(refusal, what: "a connection", peer: address.description, host: host, now: now)
            writeLedgerLog()
            // Closing at once with the client's first line unread would reset the connection and lose the
            // reply; so the refused connection lingers like any final reply, unless too many already do.
            guard lingering < limits.maximumConnections else {
                let reply = LineProtocol.error(refusal)
                _ = reply.withCString { send(descriptor.rawValue, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                connectionChanged(.closed)
                return  // `descriptor` closes it
            }
            guard let connection = register(descriptor, from: address, now: now) else { return connectionChanged(.closed) }
            connection.reply(LineProtocol.error(refusal))
            connection.finalReplyQueued = true
            flush(connection)
            return
        }
        if register(descriptor, from: address, now: now) == nil { connectionChanged(.closed) }
    }

    @discardableResult
    private func register(_ descriptor: consuming FileDescriptor, from address: SocketAddress, now: Double) -> Connection? {
        let serial = nextSerial
        nextSerial += 1
        let watched = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
        guard (try? poll.add(descriptor.rawValue, tag: serial, events: watched)) != nil else { return nil }
        let session = LineSession(
            peer: address.description, host: address.host, isLoopback: AddressRange.isLoopback(address.host), now: now,
            configuration: sessionConfiguration)
        let connection = Connection(descriptor: descriptor, serial: serial, session: session)
        connection.watched = watched
        connections[serial] = connection
        sweepNoLaterThan(session.deadline)
        return connection
    }

    /// Out of descriptors (EMFILE, ENFILE) or memory: the listening socket stays readable, so stop watching
    /// it for a while instead of spinning; the clients wait in the backlog.
    func pauseAccepting(_ error: SystemError) {
        ledger.note(code: "accept-failed", host: "the listener", now: WallClock.monotonicSeconds()) {
            "cannot accept connections: \(error); pausing accepts (back-off up to 1 s)"
        }
        writeLedgerLog()
        try? poll.modify(listenSocket.descriptor.rawValue, tag: 0, events: 0)
        acceptPausedUntil = WallClock.monotonicSeconds() + acceptBackoff
        sweepNoLaterThan(acceptPausedUntil!)
        acceptBackoff = min(acceptBackoff * 2, 1)
    }
}
