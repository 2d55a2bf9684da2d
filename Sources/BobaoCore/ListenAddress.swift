/// `HOST:PORT` as given to `--listen` or `--to`: an IPv4 address, `[IPv6]`, or a host name (looked up when
/// the socket is made).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public static let defaultPort: UInt16 = 7777

    public enum Invalid: Error, Equatable, CustomStringConvertible {
        case format(String)
        case port(String)

        public var description: String {
            switch self {
            case .format(let text): "'\(text)' is not HOST:PORT, [IPv6]:PORT or PORT (for example 127.0.0.1:7777, counter.local:7777, [::1]:7777 or 7777)"
            case .port(let text): "'\(text)' is not a port number (0-65535)"
            }
        }
    }

    /// Parses `HOST:PORT`, `[V6]:PORT`, `HOST` (default port), `PORT` or `:PORT` (loopback).
    public init(parsing text: String) throws(Invalid) {
        if !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            guard let port = UInt16(text) else { throw .port(text) }
            self.init(host: "127.0.0.1", port: port)
            return
        }
        guard !text.isEmpty, !text.contains(where: { $0.isWhitespace || $0 == "/" }) else { throw .format(text) }
        var host = text
        var portText: String?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .format(text) }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw .format(text) }
                portText = String(rest.dropFirst())
            }
        } else if let colon = text.lastIndex(of: ":") {
            guard text.firstIndex(of: ":") == colon else { throw .format(text) }  // bare IPv6 needs brackets
            host = String(text[..<colon])
            portText = String(text[text.index(after: colon)...])
        }
        if host.isEmpty { host = "127.0.0.1" }
        var port = Self.defaultPort
        if let portText {
            guard portText.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  let value = UInt16(portText) else { throw .port(portText) }
            port = value
        }
        self.init(host: host, port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
