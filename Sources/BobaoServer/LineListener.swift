import BobaoCore
import BobaoPlatform
import CLinux
import Dispatch
import Glibc
import Synchronization

/// The TCP side: accepts many clients on one thread with epoll (no thread per connection), splits what
/// they send into lines, hands each line to `onLine`, and writes back its reply.
///
/// A client that never reads its replies cannot stall anyone: once its unsent replies pass a high-water
/// mark, Bobao stops reading from it (its own sends then block) until it catches up.
public final class LineListener: @unchecked Sendable {
    // `connections`, the descriptors and `readBuffer` belong to the listener thread once `start` is
    // called; other threads only call `stop()`, which goes through `wakeFD` and the atomic flag.
    public let boundAddress: String
    private let listenFD: Int32
    private let epollFD: Int32
    private let wakeFD: Int32
    private let stopRequested = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    private var connections: [Int32: Connection] = [:]
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
    private let maximumLineBytes: Int
    private let maximumConnections: Int
    private let idleTimeout: Double
    private let requiresAuthentication: Bool
    static let authenticationSeconds = 5.0
    private var lastSweep = 0.0
    private let onLine: (LineProtocol.Request, Client) -> LineReply?
    private let onClose: (Client) -> Void
    private let onBusy: (String) -> Void
    private let admits: (String) -> Bool

    static let outputHighWater = 64 * 1024
    static let outputLowWater = 16 * 1024

    /// Binds and listens at once, so `boundAddress` is known (port 0 picks a free port).
    /// - Parameters:
    ///   - onLine: called on the listener thread for every line; returns the reply to send, or nil for none.
    ///   - admits: whether a peer host may connect at all; others get `ERR forbidden` and are closed.
    ///   - onBusy: called with the peer's address when a connection is refused for the connection limit.
    ///   - onClose: called on the listener thread when a client's connection ends.
    ///   - maximumConnections: beyond this, a new client is answered `ERR busy` and closed.
    ///   - idleTimeout: seconds without a byte from a client before its connection is closed.
    ///   - requiresAuthentication: clients must authenticate; until they do they get only a few seconds.
    public init(
        address: ListenAddress, maximumLineBytes: Int = 4096, maximumConnections: Int = 512,
        idleTimeout: Double = 60, requiresAuthentication: Bool = false,
        admits: @escaping (String) -> Bool = { _ in true },
        onLine: @escaping (LineProtocol.Request, Client) -> LineReply?,
        onBusy: @escaping (String) -> Void = { _ in },
        onClose: @escaping (Client) -> Void = { _ in }
    ) throws {
        self.onBusy = onBusy
        self.admits = admits
        self.maximumLineBytes = maximumLineBytes
        self.maximumConnections = maximumConnections
        self.idleTimeout = idleTimeout
        self.requiresAuthentication = requiresAuthentication
        self.onLine = onLine
        self.onClose = onClose
        Posix.raiseDescriptorLimit()
        let socketAddress = try SocketAddress(host: address.host, port: address.port)
        let fd = try Posix.call("socket") {
            socket(socketAddress.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        do {
            try Posix.call("bind \(address)") { socketAddress.withSockaddr { bind(fd, $0, $1) } }
            try Posix.call("listen") { listen(fd, 1024) }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            try Posix.call("getsockname") {
                withUnsafeMutablePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
                }
            }
            boundAddress = SocketAddress(storage: storage, length: length).description
            epollFD = try Posix.call("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
            wakeFD = try Posix.call("eventfd") { eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK)) }
        } catch {
            close(fd)
            throw error
        }
        listenFD = fd
        try watch(listenFD, events: EPOLLIN.rawValue, operation: EPOLL_CTL_ADD)
        try watch(wakeFD, events: EPOLLIN.rawValue, operation: EPOLL_CTL_ADD)
    }

    deinit {
        readBuffer.deallocate()
    }

    private func watch(_ fd: Int32, events: UInt32, operation: Int32) throws {
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        try Posix.call("epoll_ctl") { epoll_ctl(epollFD, operation, fd, &event) }
    }

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
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
        stopped.wait()
    }

    // MARK: The loop

    private func run() {
        let capacity = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        while !stopRequested.load(ordering: .sequentiallyConsistent) {
            // Wake at least once a second while clients are connected, to close idle ones.
            let count = epoll_wait(epollFD, events, Int32(capacity), connections.isEmpty ? -1 : 1000)
            // Idle connections are closed after this round's events, so a line arriving just in time counts.
            defer { closeIdleConnections() }
            if count < 0 { continue }  // EINTR
            for index in 0..<Int(count) {
                let fd = events[index].data.fd
                let flags = events[index].events
                if fd == listenFD {
                    acceptAll()
                } else if fd == wakeFD {
                    continue
                } else if let connection = connections[fd] {
                    connection.lastActivity = WallClock.monotonicSeconds()
                    service(connection, flags: flags)
                }
            }
        }
        for connection in Array(connections.values) { drop(connection) }
        close(listenFD)
        close(epollFD)
        close(wakeFD)
    }

    private func acceptAll() {
        while true {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listenFD, $0, &length) }
            }
            if fd < 0 {
                if errno == EINTR { continue }
                // EAGAIN: all taken. EMFILE/ENFILE and the like: leave the rest in the backlog for now.
                return
            }
            // Bobao never forks, so setting these after accept leaves no window that matters.
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            let address = SocketAddress(storage: storage, length: length)
            guard admits(address.host) else {
                refuseAtOnce(fd, .forbidden)
                onBusy("\(address.description) (forbidden)")
                continue
            }
            guard connections.count < maximumConnections else {
                refuseAtOnce(fd, .busy(limit: maximumConnections))
                onBusy(address.description)
                continue
            }
            let connection = Connection(
                fd: fd, client: Client(peer: address.description, host: address.host),
                framer: LineFramer(maximumLineBytes: maximumLineBytes))
            connection.lastActivity = WallClock.monotonicSeconds()
            do {
                try watch(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, operation: EPOLL_CTL_ADD)
                connections[fd] = connection
            } catch {
                close(fd)
            }
        }
    }

    /// Answers a connection that will not be served and closes it. Best effort: a fresh socket's buffer
    /// takes one short line.
    private func refuseAtOnce(_ fd: Int32, _ refusal: LineProtocol.Refusal) {
        let reply = LineProtocol.error(refusal)
        _ = reply.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        close(fd)
    }

    /// Closes connections that sent nothing for `idleTimeout`, telling them why. Runs at most once a second.
    private func closeIdleConnections() {
        let now = WallClock.monotonicSeconds()
        guard now - lastSweep >= 1 else { return }
        lastSweep = now
        for connection in Array(connections.values) {
            // Before it has authenticated, a client gets a few seconds, not the full idle timeout: silent
            // unauthenticated connections must not be able to fill the connection limit for long.
            let limit = requiresAuthentication && !connection.client.authenticated
                ? min(Self.authenticationSeconds, idleTimeout) : idleTimeout
            guard now - connection.lastActivity >= limit else { continue }
            let reply = LineProtocol.error(.idle(seconds: limit))
            _ = reply.withCString { send(connection.fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            connection.client.closedIdle = true
            drop(connection)
        }
    }

    private func service(_ connection: Connection, flags: UInt32) {
        if flags & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0,
           !connection.readClosed, !connection.readingPaused {
            readAvailable(connection)
        }
        guard connections[connection.fd] === connection else { return }  // dropped while reading
        flush(connection)
    }

    private func readAvailable(_ connection: Connection) {
        while !connection.readingPaused {
            let received: Int?
            do {
                received = try Posix.nonBlocking("read") { read(connection.fd, readBuffer.baseAddress, readBuffer.count) }
            } catch {
                drop(connection)
                return
            }
            guard let received else { return }  // drained
            if received == 0 {
                connection.readClosed = true
                handle(connection.framer.finish(), from: connection)
                return
            }
            handle(connection.framer.push(UnsafeRawBufferPointer(rebasing: readBuffer[..<received])), from: connection)
            if connection.pendingOutput > Self.outputHighWater { connection.readingPaused = true }
        }
    }

    private func handle(_ items: [LineFramer.Item], from connection: Connection) {
        for item in items {
            let request: LineProtocol.Request
            switch item {
            case .line(let bytes): request = LineProtocol.parse(bytes)
            case .tooLong: request = .invalid(.tooLong(limit: maximumLineBytes))
            }
            guard !connection.closingAfterReply else { return }  // what follows a final reply is ignored
            if let reply = onLine(request, connection.client) {
                connection.output.append(contentsOf: reply.text.utf8)
                if reply.close { connection.closingAfterReply = true }
            }
        }
    }

    /// Sends what it can; then decides what to wait for next, or closes a finished connection.
    private func flush(_ connection: Connection) {
        while connection.pendingOutput > 0 {
            let sent: Int?
            do {
                sent = try connection.output.withUnsafeBytes { bytes in
                    try Posix.nonBlocking("send") {
                        send(connection.fd, bytes.baseAddress! + connection.outputOffset, connection.pendingOutput, Int32(MSG_NOSIGNAL))
                    }
                }
            } catch {
                drop(connection)  // the peer vanished; nobody else is affected
                return
            }
            guard let sent else { break }
            connection.outputOffset += sent
        }
        if connection.pendingOutput == 0 {
            connection.output.removeAll(keepingCapacity: connection.output.count <= 4096)
            connection.outputOffset = 0
        } else if connection.outputOffset > 64 * 1024 {
            // A slow but steady reader: drop what it has read, so the buffer holds only what is unsent.
            connection.output.removeFirst(connection.outputOffset)
            connection.outputOffset = 0
        }
        if connection.readClosed && connection.pendingOutput == 0 {
            drop(connection)
            return
        }
        if connection.closingAfterReply && connection.pendingOutput == 0 && !connection.sentFinalReply {
            // Half-close, so the client reads the final reply and an end of stream; closing outright with
            // its later lines unread would reset the connection and could lose the reply. Its end of stream
            // (or the idle timeout) then closes ours.
            connection.sentFinalReply = true
            shutdown(connection.fd, Int32(SHUT_WR))
        }
        if connection.readingPaused && connection.pendingOutput < Self.outputLowWater {
            connection.readingPaused = false
            readAvailable(connection)  // lines that waited in the socket
            if connections[connection.fd] == nil { return }
            if connection.readClosed && connection.pendingOutput == 0 { drop(connection); return }
        }
        var wanted: UInt32 = 0
        if !connection.readClosed && !connection.readingPaused { wanted |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if connection.pendingOutput > 0 { wanted |= EPOLLOUT.rawValue }
        if wanted != connection.watched {
            connection.watched = wanted
            try? watch(connection.fd, events: wanted, operation: EPOLL_CTL_MOD)
        }
    }

    private func drop(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.fd) != nil else { return }
        close(connection.fd)
        onClose(connection.client)
    }
}
