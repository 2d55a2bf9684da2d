import Foundation
import Glibc

/// A line-protocol client for the `"wait": true` events: a thread reads every reply line as it arrives and
/// keeps it with the kernel's receive time (`SO_TIMESTAMPNS`, CLOCK_REALTIME), so lines that arrive on
/// different connections microseconds apart can still be put in the order the server sent them, which the
/// reader threads' wake-up order cannot tell.
final class EventClient: @unchecked Sendable {
    struct Line: Sendable, CustomStringConvertible {
        var text: String
        /// When the kernel received the last segment of the read that completed this line (seconds since
        /// 1970); on loopback, the order of the server's sends. Nil if the kernel gave no time.
        var received: Double?

        /// The line as a JSON object, if it is one.
        var object: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
        }

        /// `start`, `done`… for an event line; nil for a reply.
        var event: String? { object?["event"] as? String }
        var number: Int? { (object?["number"] as? NSNumber)?.intValue }
        var description: String { text }
    }

    private let fd: Int32
    private let state = ReaderState()

    init(port: UInt16) throws {
        fd = try RawClient.connectLoopback(port: port) { fd in
            var on: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        let descriptor = fd, state = self.state
        Thread { state.read(descriptor) }.start()
    }

    /// Ends the reader (shutting the socket down wakes its read) before closing, so the descriptor's number
    /// is never reused under a read.
    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        state.waitFor(timeout: 5) { $0.ended }
        close(fd)
    }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            offset += sent
        }
    }

    /// Ends the sending side; the server closes once it has replied and sent every outcome.
    func finishSending() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Every line received so far.
    var lines: [Line] { state.withLock { $0.lines } }

    /// Waits, waking on every line, until `predicate` holds for the lines received or `timeout` passes.
    @discardableResult
    func waitFor(timeout: Double, _ predicate: ([Line]) -> Bool) -> Bool {
        state.waitFor(timeout: timeout) { predicate($0.lines) || $0.ended }
        return predicate(lines)
    }

    /// Waits for `count` lines; returns what arrived.
    @discardableResult
    func waitForLines(_ count: Int, timeout: Double = 30) -> [Line] {
        state.waitFor(timeout: timeout) { $0.lines.count >= count || $0.ended }
        return lines
    }

    /// Waits until a line with event `name` for message `number` has arrived; returns it.
    @discardableResult
    func waitForEvent(_ name: String, number: Int? = nil, timeout: Double = 30) -> Line? {
        func find(_ lines: [Line]) -> Line? {
            lines.first { $0.event == name && (number == nil || $0.number == number) }
        }
        state.waitFor(timeout: timeout) { find($0.lines) != nil || $0.ended }
        return find(lines)
    }

    /// Waits until the server closes the connection.
    @discardableResult
    func waitForEnd(timeout: Double = 30) -> Bool {
        state.waitFor(timeout: timeout) { $0.ended }
    }

    /// The event names received for message `number`, in order.
    func events(of number: Int) -> [String] {
        lines.filter { $0.number == number }.compactMap(\.event)
    }
}

/// What the reader thread fills; guarded by `condition`.
private final class ReaderState: @unchecked Sendable {
    struct Snapshot {
        var lines: [EventClient.Line] = []
        var ended = false
    }

    private let condition = NSCondition()
    private var snapshot = Snapshot()

    func withLock<T>(_ body: (Snapshot) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(snapshot)
    }

    @discardableResult
    func waitFor(timeout: Double, _ predicate: (Snapshot) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(snapshot) {
            if !condition.wait(until: deadline) { return predicate(snapshot) }
        }
        return true
    }

    func read(_ fd: Int32) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        // Room for one cmsghdr and a timespec, 8-byte aligned.
        var control = [UInt64](repeating: 0, count: 16)
        while true {
            var received = 0
            var stamp: Double?
            buffer.withUnsafeMutableBytes { bytes in
                control.withUnsafeMutableBytes { controlBytes in
                    var vector = iovec(iov_base: bytes.baseAddress, iov_len: bytes.count)
                    withUnsafeMutablePointer(to: &vector) { vectorPointer in
                        var message = msghdr()
                        message.msg_iov = vectorPointer
                        message.msg_iovlen = 1
                        message.msg_control = controlBytes.baseAddress
                        message.msg_controllen = controlBytes.count
                        repeat { received = recvmsg(fd, &message, 0) } while received < 0 && errno == EINTR
                        if received > 0 { stamp = Self.timestamp(in: controlBytes, length: Int(message.msg_controllen)) }
                    }
                }
            }
            guard received > 0 else { break }  // the end of the stream, or the socket was shut down
            pending += buffer[..<received]
            var complete: [EventClient.Line] = []
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                complete.append(EventClient.Line(text: String(decoding: pending[..<newline], as: UTF8.self), received: stamp))
                pending.removeFirst(newline + 1)
            }
            if !complete.isEmpty {
                condition.lock()
                snapshot.lines += complete
                condition.broadcast()
                condition.unlock()
            }
        }
        condition.lock()
        if !pending.isEmpty {
            snapshot.lines.append(EventClient.Line(text: String(decoding: pending, as: UTF8.self), received: nil))
        }
        snapshot.ended = true
        condition.broadcast()
        condition.unlock()
    }

    /// The SCM_TIMESTAMPNS control message's time, if the kernel attached one: a `cmsghdr` (length, level,
    /// type) followed, 8-byte aligned, by a `timespec`.
    private static func timestamp(in control: UnsafeMutableRawBufferPointer, length: Int) -> Double? {
        let headerSize = MemoryLayout<cmsghdr>.size
        var offset = 0
        while offset + headerSize <= length {
            let header = control.load(fromByteOffset: offset, as: cmsghdr.self)
            let size = Int(header.cmsg_len)
            guard size >= headerSize else { return nil }
            if header.cmsg_level == SOL_SOCKET && header.cmsg_type == SO_TIMESTAMPNS,
               size >= headerSize + MemoryLayout<timespec>.size {
                let time = control.loadUnaligned(fromByteOffset: offset + headerSize, as: timespec.self)
                return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
            }
            offset += (size + 7) & ~7
        }
        return nil
    }
}
