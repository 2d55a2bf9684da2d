import BobaoCore
import Foundation
import Glibc

/// A loopback TCP client for abuse tests: sends without blocking, never has to read.
final class RawClient: @unchecked Sendable {
    let fd: Int32

    init(port: UInt16) throws {
        fd = try Self.connectLoopback(port: port)
    }

    /// A blocking TCP socket connected to 127.0.0.1:`port` (`configure` runs on it before the connect).
    static func connectLoopback(port: UInt16, configure: (Int32) -> Void = { _ in }) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        configure(fd)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            let error = POSIXError(.init(rawValue: errno) ?? .EIO)
            close(fd)
            throw error
        }
        return fd
    }

    deinit { close(fd) }

    /// Sends all of `bytes`, blocking while the server does not read (at most `timeout` at a time, so a
    /// flood can be stopped); returns false once the connection is broken.
    func sendBlocking(_ bytes: [UInt8], timeout: Double = 0.2) -> Bool {
        var limit = timeval(tv_sec: 0, tv_usec: Int(timeout * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return sent >= 0 || errno == EAGAIN || errno == EWOULDBLOCK
    }

    /// Sends what the socket takes now; returns how much, or nil once the connection is broken.
    @discardableResult
    func sendSome(_ bytes: [UInt8]) -> Int? {
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        if sent >= 0 { return sent }
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : nil
    }

    /// Reads until the peer closes or `timeout` passes; returns what arrived.
    func readAll(timeout: Double) -> [UInt8] {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000))) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            received += chunk[..<count]
        }
        return received
    }
}

/// A thread that keeps doing `body` until stopped.
final class Flood: @unchecked Sendable {
    private let running = NSLock()
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable (_ isStopped: () -> Bool) -> Void) {
        Thread { [self] in
            body { running.withLock { stopped } }
            done.signal()
        }.start()
    }

    /// Stops the thread and waits for it; again is harmless.
    func stop() {
        let first = running.withLock {
            defer { stopped = true }
            return !stopped
        }
        if first { done.wait() }
    }
}
