import BobaoCore
import BobaoPlatform
import Glibc

/// A blocking client for Bobao's line protocol (`bobao say`, tests and benchmarks).
public final class LineClient: @unchecked Sendable {
    // One thread sends, one thread reads; each touches only its own half (`fd` is shared, read-only).
    private let fd: Int32
    private var received: [UInt8] = []

    /// Connects to the first address `address` resolves to that answers.
    public init(connectingTo address: ListenAddress) throws {
        var lastError: (any Error)?
        for socketAddress in try SocketAddress.resolve(host: address.host, port: address.port) {
            let fd: Int32
            do {
                fd = try Posix.call("socket") { socket(socketAddress.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
            } catch {
                lastError = error
                continue
            }
            do {
                try Posix.call("connect") { socketAddress.withSockaddr { connect(fd, $0, $1) } }
                self.fd = fd
                return
            } catch {
                close(fd)
                lastError = error
            }
        }
        throw lastError!
    }

    deinit { close(fd) }

    /// Sends all of `text`.
    public func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = try bytes.withUnsafeBytes { buffer in
                try Posix.call("send") {
                    Int32(Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL)))
                }
            }
            offset += Int(sent)
        }
    }

    /// Half-closes the connection: the server sees the end of the input (a last line without newline
    /// counts) and closes once it has replied.
    public func finishSending() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// The next reply line without its newline; nil at the end of the stream.
    public func readLine() -> String? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = received.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: received[..<newline], as: UTF8.self)
                received.removeFirst(newline + 1)
                return line
            }
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                guard !received.isEmpty else { return nil }
                defer { received.removeAll() }
                return String(decoding: received, as: UTF8.self)
            }
            received.append(contentsOf: chunk[..<count])
        }
    }
}
