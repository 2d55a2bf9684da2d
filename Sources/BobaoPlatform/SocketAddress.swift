#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 socket address: numeric, or looked up by name.
public struct SocketAddress: Sendable, CustomStringConvertible {
    var storage = sockaddr_storage()
    public private(set) var length: socklen_t = 0
    public var family: Int32 { Int32(storage.ss_family) }

    /// A numeric IPv4 or IPv6 address (no name lookup).
    public init(numericHost host: String, port: UInt16) throws(SystemError) {
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { target in withUnsafeBytes(of: v4) { target.copyMemory(from: $0) } }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        } else if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { target in withUnsafeBytes(of: v6) { target.copyMemory(from: $0) } }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            throw SystemError(call: "address '\(host)' is not a numeric IPv4/IPv6 address", errno: EINVAL)
        }
    }

    /// Every address `host` stands for: a numeric address as it is (no lookup), `localhost` as 127.0.0.1
    /// then ::1 (a listener binds the first; a client tries both), any other name through `getaddrinfo`
    /// (/etc/hosts, DNS, mDNS as nsswitch.conf says), in its order.
    public static func resolve(host: String, port: UInt16) throws(ResolutionError) -> [SocketAddress] {
        if host == "localhost" {
            return [try! SocketAddress(numericHost: "127.0.0.1", port: port), try! SocketAddress(numericHost: "::1", port: port)]
        }
        if let numeric = try? SocketAddress(numericHost: host, port: port) { return [numeric] }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            let reason = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            throw ResolutionError(host: host, reason: reason)
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            if let address = current.pointee.ai_addr, current.pointee.ai_addrlen <= MemoryLayout<sockaddr_storage>.size {
                var storage = sockaddr_storage()
                withUnsafeMutableBytes(of: &storage) { target in
                    target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(current.pointee.ai_addrlen)))
                }
                let resolved = SocketAddress(storage: storage, length: current.pointee.ai_addrlen)
                if !addresses.contains(where: { $0.description == resolved.description }) { addresses.append(resolved) }
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw ResolutionError(host: host, reason: "no IPv4 or IPv6 address") }
        return addresses
    }

    /// A host name that did not resolve.
    public struct ResolutionError: Error, CustomStringConvertible {
        public let host: String
        public let reason: String
        public var description: String { "cannot resolve '\(host)': \(reason)" }
    }

    public init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    /// The address of a socket's own end (`getsockname`).
    public static func local(of fd: Int32) throws(SystemError) -> SocketAddress {
        var address = SocketAddress(storage: sockaddr_storage(), length: socklen_t(MemoryLayout<sockaddr_storage>.size))
        try Posix.call("getsockname") { address.withMutableSockaddr { getsockname(fd, $0, $1) } }
        return address
    }

    /// The address without the port.
    public var host: String {
        let text = description
        guard let colon = text.lastIndex(of: ":") else { return text }
        return String(text[..<colon].filter { $0 != "[" && $0 != "]" })
    }

    /// `host:port` (IPv6 in brackets).
    public var description: String {
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

    public func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var copy = storage
        return withUnsafePointer(to: &copy) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
    }

    /// For calls that fill an address in (`accept`, `getsockname`).
    public mutating func withMutableSockaddr<T>(_ body: (UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> T) -> T {
        length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        var size = length
        defer { length = size }
        return withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, &size) }
        }
    }
}
