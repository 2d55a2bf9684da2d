/// Another protocol spoken to the line port by mistake (a browser, `curl`, a TLS client, a port scanner).
/// Detected on the first bytes and the first line only, and never read aloud.
public enum ForeignProtocol: Equatable, Sendable {
    /// An HTTP request line: answered with a short `400` that says what this port is, then closed.
    case http
    /// A TLS handshake: closed without a word (the client could not read one).
    case tls
    /// Another text protocol with HTTP's request-line shape (`OPTIONS * RTSP/1.0`, SIP, …): closed.
    case requestLine(protocol: String)
    /// An SSH client's banner (`SSH-2.0-OpenSSH_9.2`): closed.
    case ssh

    /// A TLS record header opens with the handshake content type 0x16 and the major version 3.
    public static func detectHandshake(_ first: UInt8, _ second: UInt8) -> ForeignProtocol? {
        first == 0x16 && second == 0x03 ? .tls : nil
    }

    /// Whether a connection's first line is a request of another protocol: `METHOD TARGET PROTO/x.y` (in
    /// either case: no announcement looks like that), HTTP/0.9's `GET /path`, or an SSH banner.
    public static func detect(firstLine line: [UInt8]) -> ForeignProtocol? {
        let original = Array(line.drop { $0 == 0x20 || $0 == 0x09 })
        guard original.count <= 8192 else { return detect(start: original) }
        let bytes = original.map { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) ? $0 - 32 : $0 }
        if bytes.count > 4, bytes.starts(with: Array("SSH-".utf8)), isDigit(bytes[4]) { return .ssh }
        let parts = bytes.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, let method = parts.first, (1...20).contains(method.count),
              method.allSatisfy({ isUpper($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }),
              !parts[1].isEmpty else { return nil }
        if parts.count == 2 {
            return Array(method) == Array("GET".utf8) && parts[1].first == UInt8(ascii: "/") ? .http : nil
        }
        // PROTO/DIGITS[.DIGITS]
        let version = parts[2]
        guard let slash = version.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let name = version[..<slash], number = version[version.index(after: slash)...]
        guard (2...10).contains(name.count), name.allSatisfy(isUpper), !number.isEmpty,
              number.first.map(isDigit) == true,
              number.allSatisfy({ isDigit($0) || $0 == UInt8(ascii: ".") }) else { return nil }
        let protocolName = String(decoding: name, as: UTF8.self)
        return protocolName == "HTTP" ? .http : .requestLine(protocol: protocolName)
    }

    /// Whether the first bytes of a line too long to look at whole begin an HTTP request: a method, a space,
    /// and a target that starts with `/`, `*` or `http`.
    public static func detect(start: [UInt8]) -> ForeignProtocol? {
        let bytes = Array(start.drop { $0 == 0x20 || $0 == 0x09 }.prefix(64))
        guard let space = bytes.firstIndex(of: 0x20), (1...20).contains(space),
              bytes[..<space].allSatisfy({ isUpper($0 & 0xDF) || $0 == UInt8(ascii: "-") }) else { return nil }
        let target = bytes[(space + 1)...]
        let starts = [Array("/".utf8), Array("*".utf8), Array("http://".utf8), Array("https://".utf8)]
        return starts.contains { target.starts(with: $0) } ? .http : nil
    }

    /// The whole answer to an HTTP client: status, headers and a one-line body naming the port's protocol.
    public static func httpRefusal(hint: String? = nil) -> String {
        var body = "This is Bobao's line port, not HTTP: send one line of UTF-8 text per announcement, "
            + "for example: echo TEXT | nc HOST PORT\n"
        if let hint { body += hint + "\n" }
        return "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
    }

    public var name: String {
        switch self {
        case .http: "HTTP"
        case .tls: "TLS"
        case .requestLine(let name): name
        case .ssh: "SSH"
        }
    }

    private static func isUpper(_ byte: UInt8) -> Bool { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) }
    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}
