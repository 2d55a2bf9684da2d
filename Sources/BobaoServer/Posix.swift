import Glibc

/// A failed system call: its name and errno.
public struct SystemError: Error, CustomStringConvertible {
    public var call: String
    public var errno: Int32

    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// System calls behind one namespace: `EINTR` is retried, `EAGAIN` comes back as nil, other failures throw.
enum Posix {
    @discardableResult
    static func call(_ name: String, _ body: () -> Int32) throws -> Int32 {
        while true {
            let result = body()
            if result >= 0 { return result }
            if errno == EINTR { continue }
            throw SystemError(call: name, errno: errno)
        }
    }

    /// For calls that may block: nil when the descriptor is not ready (`EAGAIN`).
    static func nonBlocking(_ name: String, _ body: () -> Int) throws -> Int? {
        while true {
            let result = body()
            if result >= 0 { return result }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
            throw SystemError(call: name, errno: errno)
        }
    }

    /// Lets the process hold as many descriptors as the hard limit allows (for thousands of clients).
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// A socket address for `ListenAddress` hosts: IPv4, IPv6 or `localhost`.
struct SocketAddress {
    var storage = sockaddr_storage()
    var length: socklen_t = 0
    var family: Int32 { Int32(storage.ss_family) }

    /// Resolves numeric addresses and `localhost` only: a counter box should not depend on DNS.
    init(host: String, port: UInt16) throws {
        let host = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { $0.copyBytes(from: withUnsafeBytes(of: v4) { Array($0) }) }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        } else if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { $0.copyBytes(from: withUnsafeBytes(of: v6) { Array($0) }) }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            throw SystemError(call: "address '\(host)' is not a numeric IPv4/IPv6 address or localhost", errno: EINVAL)
        }
    }

    init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    /// The address without the port.
    var host: String {
        let text = description
        guard let colon = text.lastIndex(of: ":") else { return text }
        return String(text[..<colon].filter { $0 != "[" && $0 != "]" })
    }

    /// `host:port` (IPv6 in brackets).
    var description: String {
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer in
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            if family == AF_INET {
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    var address = v4.pointee.sin_addr
                    inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
                    return "\(Self.string(text)):\(UInt16(bigEndian: v4.pointee.sin_port))"
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                var address = v6.pointee.sin6_addr
                inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
                return "[\(Self.string(text))]:\(UInt16(bigEndian: v6.pointee.sin6_port))"
            }
        }
    }

    private static func string(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var copy = storage
        return withUnsafePointer(to: &copy) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
    }
}
