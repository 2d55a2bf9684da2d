import BobaoCore
import Glibc

/// An address range from `--allow`: `192.168.1.0/24`, `10.0.0.7` (one host), `fd00::/8`.
public struct AddressRange: Sendable, Equatable, CustomStringConvertible {
    let bytes: [UInt8]  // 4 or 16
    let prefixLength: Int
    public let description: String

    public struct Invalid: Error, CustomStringConvertible {
        public var text: String
        public var description: String { "'\(text)' is not an address range like 192.168.1.0/24 or fd00::/8" }
    }

    public init(parsing text: String) throws(Invalid) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let bytes = Self.addressBytes(String(parts[0])) else { throw Invalid(text: text) }
        var prefix = bytes.count * 8
        if parts.count == 2 {
            guard let value = Int(parts[1]), (0...bytes.count * 8).contains(value) else { throw Invalid(text: text) }
            prefix = value
        }
        self.bytes = bytes
        prefixLength = prefix
        description = text
    }

    /// The 4 or 16 bytes of a numeric address (`localhost` means 127.0.0.1).
    static func addressBytes(_ text: String) -> [UInt8]? {
        let text = text == "localhost" ? "127.0.0.1" : text
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            // An IPv4 client on an IPv6 socket appears as ::ffff:a.b.c.d.
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return Array(bytes[12...])
            }
            return bytes
        }
        return nil
    }

    public func contains(_ host: String) -> Bool {
        guard let address = Self.addressBytes(host), address.count == bytes.count else { return false }
        var remaining = prefixLength
        for index in 0..<bytes.count where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if address[index] & mask != bytes[index] & mask { return false }
            remaining -= bits
        }
        return true
    }

    /// 127.0.0.0/8 and ::1.
    public static func isLoopback(_ host: String) -> Bool {
        guard let address = addressBytes(host) else { return false }
        return address.count == 4 ? address[0] == 127 : address == Array(repeating: 0, count: 15) + [1]
    }
}

/// Who may make the speaker talk: loopback always; other addresses only when listed with `--allow`; and,
/// with `--token`, only a client whose first line is `AUTH <token>`.
public struct AccessPolicy: Sendable {
    public var token: String?
    public var allowed: [AddressRange]

    public init(token: String? = nil, allowed: [AddressRange] = []) {
        self.token = token
        self.allowed = allowed
    }

    public struct Unsafe: Error, CustomStringConvertible {
        public var listen: ListenAddress
        public var description: String {
            "refusing to listen on \(listen) without access control: anyone on that network could make the "
                + "speaker talk. Add --token SECRET (clients send AUTH SECRET first; bobao say --token), "
                + "--allow CIDR[,CIDR…] (for example --allow 192.168.1.0/24), or both (HTTP clients send the token as "
                + "Authorization: Bearer SECRET); or listen on 127.0.0.1"
        }
    }

    /// Listening beyond loopback needs a token or an allow list. A host name counts as loopback only when
    /// every address it resolves to (`hosts`, numeric) is loopback.
    public func check(listeningOn listen: ListenAddress, hosts: [String]? = nil) throws(Unsafe) {
        let everyLoopback = (hosts ?? [listen.host]).allSatisfy(AddressRange.isLoopback)
        guard !everyLoopback, token == nil, allowed.isEmpty else { return }
        throw Unsafe(listen: listen)
    }

    /// Whether a connection from `host` may be served at all.
    public func admits(_ host: String) -> Bool {
        allowed.isEmpty || AddressRange.isLoopback(host) || allowed.contains { $0.contains(host) }
    }

    /// Compares a presented token with the configured one in time that does not depend on where they
    /// differ.
    public func tokenMatches(_ presented: String) -> Bool {
        guard let token else { return false }
        return SecretComparison.matches(presented, token)
    }
}
