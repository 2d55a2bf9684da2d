import Foundation
import Glibc

/// A stand-in for a Bobao server, for testing the client commands against the protocol's texts without
/// one: accepts one connection on loopback, reads until the client half-closes, sends `reply` and closes.
/// Keeps what the client sent. Gives up after 10 s without a client.
final class ScriptedPeer: Sendable {
    let port: UInt16
    private let received: Received

    private final class Received: @unchecked Sendable {
        // Written by the peer's thread before `done` is signalled, read after it.
        var bytes: [UInt8] = []
        let done = DispatchSemaphore(value: 0)
    }

    init(reply: String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard fd >= 0, bound else {
            let error = POSIXError(.init(rawValue: errno) ?? .EIO)
            if fd >= 0 { close(fd) }
            throw error
        }
        port = UInt16(bigEndian: address.sin_port)
        let received = Received()
        self.received = received
        let replyBytes = Array(reply.utf8)
        Thread.detachNewThread {
            defer { received.done.signal() }
            var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&waiting, 1, 10_000)
            let client = ready == 1 ? accept(fd, nil, nil) : -1
            close(fd)
            guard client >= 0 else { return }
            defer { close(client) }
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                received.bytes += chunk[..<count]
            }
            var offset = 0
            while offset < replyBytes.count {
                let sent = replyBytes.withUnsafeBytes {
                    send(client, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
                }
                if sent <= 0 { break }
                offset += sent
            }
        }
    }

    var address: String { "127.0.0.1:\(port)" }

    /// What the client sent, once the exchange is over.
    var receivedText: String {
        _ = received.done.wait(timeout: .now() + 15)
        return String(decoding: received.bytes, as: UTF8.self)
    }
}
