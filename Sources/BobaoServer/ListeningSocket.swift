import BobaoCore
import BobaoPlatform
import CLinux
import Glibc

/// A bound, listening, non-blocking TCP socket.
struct ListeningSocket: ~Copyable {
    let descriptor: FileDescriptor
    /// `host:port` actually bound (port 0 picks a free port).
    let boundAddress: String

    /// Binds the first address `address` resolves to (a host name may stand for several); the next only when
    /// this machine has no such address or family, never when the port is taken or not allowed.
    init(_ address: ListenAddress) throws {
        var lastError: SystemError?
        for socketAddress in try SocketAddress.resolve(host: address.host, port: address.port) {
            do {
                let socket = try Self.bound(to: socketAddress, named: address)
                boundAddress = try SocketAddress.local(of: socket.rawValue).description
                descriptor = socket
                return
            } catch {
                guard [EADDRNOTAVAIL, EAFNOSUPPORT].contains(error.errno) else { throw error }
                lastError = error
            }
        }
        throw lastError!
    }

    private static func bound(to socketAddress: SocketAddress, named address: ListenAddress) throws(SystemError) -> FileDescriptor {
        let socket = try FileDescriptor("socket") {
            Glibc.socket(socketAddress.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        var yes: Int32 = 1
        setsockopt(socket.rawValue, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let shown = address.host == socketAddress.host ? "\(address)" : "\(address) (\(socketAddress))"
        try Posix.call("bind \(shown)") { socketAddress.withSockaddr { bind(socket.rawValue, $0, $1) } }
        try Posix.call("listen") { listen(socket.rawValue, 1024) }
        return socket
    }

    enum Accepted: ~Copyable {
        case connection(FileDescriptor, SocketAddress)
        /// Nothing is waiting.
        case none
        /// A failure that will repeat (EMFILE, ENFILE, ENOBUFS, ENOMEM): stop accepting for a while.
        case exhausted(SystemError)
    }

    /// Takes the next waiting connection, non-blocking and close-on-exec.
    func accept() -> Accepted {
        while true {
            var address = SocketAddress(storage: sockaddr_storage(), length: 0)
            let fd = address.withMutableSockaddr { Glibc.accept(descriptor.rawValue, $0, $1) }
            if fd >= 0 {
                let connection = FileDescriptor(taking: fd)
                // Bobao never forks, so setting these after accept leaves no window that matters.
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                // Replies are short lines: a small kernel send buffer (the kernel doubles it) bounds what
                // clients that never read can pin in kernel memory, beside the listener's own 16 KiB cap.
                var sendBuffer: Int32 = 16 * 1024
                setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
                return .connection(connection, address)
            }
            switch errno {
            case EINTR, ECONNABORTED, EPROTO, EPERM: continue  // that client is gone; the next may be fine
            case EAGAIN: return .none
            default: return .exhausted(SystemError(call: "accept", errno: errno))
            }
        }
    }
}

/// An epoll instance whose registrations carry a 64-bit tag (never a descriptor number, which is reused).
struct EventPoll: ~Copyable {
    private let descriptor: FileDescriptor

    init() throws(SystemError) {
        descriptor = try FileDescriptor("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    }

    func add(_ fd: Int32, tag: UInt64, events: UInt32) throws(SystemError) {
        try control(EPOLL_CTL_ADD, fd, tag: tag, events: events)
    }

    func modify(_ fd: Int32, tag: UInt64, events: UInt32) throws(SystemError) {
        try control(EPOLL_CTL_MOD, fd, tag: tag, events: events)
    }

    private func control(_ operation: Int32, _ fd: Int32, tag: UInt64, events: UInt32) throws(SystemError) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = tag
        try Posix.call("epoll_ctl") { epoll_ctl(descriptor.rawValue, operation, fd, &event) }
    }

    /// Waits up to `milliseconds` (-1: for ever); returns how many events were filled in.
    func wait(_ events: UnsafeMutablePointer<epoll_event>, capacity: Int, milliseconds: Int32) throws(SystemError) -> Int {
        let count = epoll_wait(descriptor.rawValue, events, Int32(capacity), milliseconds)
        if count < 0 {
            if errno == EINTR { return 0 }
            throw SystemError(call: "epoll_wait", errno: errno)
        }
        return Int(count)
    }
}
