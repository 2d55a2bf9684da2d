import Foundation
import Glibc

/// A systemd notification socket of the test's own: a Unix datagram socket bound in a private temporary
/// folder, for a server started with `NOTIFY_SOCKET` naming it. A thread reads every datagram as it arrives
/// and keeps it with its arrival time (CLOCK_MONOTONIC seconds), so gaps between watchdog pings can be
/// measured while the test does other things.
final class NotifySocket: @unchecked Sendable {
    /// One datagram: `READY=1\nSTATUS=…`, as `sd_notify` sent it.
    struct Message: Sendable, CustomStringConvertible {
        var text: String
        var received: Double

        /// The value of `KEY=` in the message, if it has that assignment.
        func value(_ key: String) -> String? {
            text.split(separator: "\n").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
        }

        var status: String? { value("STATUS") }
        var isWatchdogPing: Bool { value("WATCHDOG") == "1" }
        var description: String { text.replacingOccurrences(of: "\n", with: "\\n") }
    }

    let path: String
    private let directory: String
    private let fd: Int32
    private let state = NotifyState()

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/bobao-notify-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        directory = String(cString: made)  // mode 0700: no one else can reach the socket
        path = directory + "/notify"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw POSIXError(.ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            let error = POSIXError(.init(rawValue: errno) ?? .EIO)
            close(fd)
            throw error
        }
        let descriptor = fd, state = self.state
        Thread { state.read(descriptor) }.start()
    }

    /// Stops the reader before closing, so the descriptor's number is never reused under a read.
    deinit {
        state.stop()
        close(fd)
        unlink(path)
        rmdir(directory)
    }

    /// `NOTIFY_SOCKET` for the server.
    var environment: [String: String] { ["NOTIFY_SOCKET": path] }

    /// Every datagram received so far.
    var messages: [Message] { state.read { $0 } }

    /// Waits, waking on every datagram, until `predicate` holds for those received or `timeout` passes.
    @discardableResult
    func waitFor(timeout: Double, _ predicate: ([Message]) -> Bool) -> Bool {
        state.waitFor(timeout: timeout, predicate)
    }

    /// Waits for the first datagram after the first `skipping` ones for which `predicate` holds; returns it.
    func waitForMessage(after skipping: Int = 0, timeout: Double = 30, _ predicate: (Message) -> Bool) -> Message? {
        func find(_ messages: [Message]) -> Message? { messages.dropFirst(skipping).first(where: predicate) }
        _ = state.waitFor(timeout: timeout) { find($0) != nil }
        return find(messages)
    }
}

/// What the reader thread fills.
private final class NotifyState: Sendable {
    private struct Received {
        var messages: [NotifySocket.Message] = []
        var stopping = false
        var ended = false
    }

    private let received = Watched(Received())

    func read<T>(_ body: ([NotifySocket.Message]) -> T) -> T {
        received.read { body($0.messages) }
    }

    func waitFor(timeout: Double, _ predicate: ([NotifySocket.Message]) -> Bool) -> Bool {
        received.waitFor(timeout: timeout) { predicate($0.messages) }
    }

    /// Ends the reader and waits until it has.
    func stop() {
        received.update { $0.stopping = true }
        received.waitFor(timeout: 60) { $0.ended }  // a poll of 100 ms at most
    }

    /// Reads datagrams until `stop`: polls a tenth of a second at a time, so it notices.
    func read(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.read(\.stopping) {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { continue }
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let message = NotifySocket.Message(
                text: String(decoding: buffer[..<count], as: UTF8.self),
                received: Double(now.tv_sec) + Double(now.tv_nsec) / 1e9)
            received.update { $0.messages.append(message) }
        }
        received.update { $0.ended = true }
    }
}
