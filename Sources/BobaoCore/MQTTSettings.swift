/// What `--mqtt` and its companions say: the broker, who Bobao is to it, and which topics it listens on.
public struct MQTTSettings: Sendable, Equatable {
    /// The broker's host name or address (an IPv6 address without brackets).
    public var host: String
    public var port: Int
    public var user: String?
    /// From `BOBAO_MQTT_PASSWORD`; never printed.
    public var password: String?
    /// This box's name in topics (`bobao/<node>/say`); the host name by default.
    public var node: String
    public var groups: [String] = []
    /// The first level(s) of every topic, `bobao` by default.
    public var prefix = "bobao"
    /// Seconds between keep-alive pings; the broker declares the box gone (its Will) after 1.5 times this.
    public var keepAliveSeconds = 30

    public init(host: String, port: Int = 1883, node: String) {
        self.host = host
        self.port = port
        self.node = node
    }

    /// A fixed client id, so the broker keeps the session (subscriptions, queued QoS 1 messages) between
    /// connections.
    public var clientID: String { "bobao-" + node }

    /// The topics announcements come on: the node's, each group's, everyone's.
    public var sayTopics: [String] {
        ["\(prefix)/\(node)/say"] + groups.map { "\(prefix)/group/\($0)/say" } + ["\(prefix)/all/say"]
    }

    /// `online` (retained) while connected; `offline` as the Last Will and after a clean stop.
    public var availabilityTopic: String { "\(prefix)/\(node)/availability" }

    /// `host:port` (IPv6 in brackets), for logs.
    public var brokerDescription: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    /// A bad `--mqtt` URL or topic name, said the way a user can fix it.
    public struct Invalid: Error, Equatable, CustomStringConvertible, Sendable {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// `mqtt://host[:port]` (port 1883 by default, `[IPv6]:port` in brackets) as host and port.
    /// - Throws: `Invalid` for another scheme, `mqtts://` (not served yet), a user or path in the URL, or a
    ///   bad port.
    public static func parseBroker(_ url: String) throws(Invalid) -> (host: String, port: Int) {
        let lowered = url.lowercased()
        if lowered.hasPrefix("mqtts://") {
            throw Invalid("mqtts:// (MQTT over TLS) is not supported yet; use mqtt://HOST:1883 on a trusted network "
                + "or a broker on this machine that bridges over TLS")
        }
        guard lowered.hasPrefix("mqtt://") else {
            throw Invalid("must be a URL like mqtt://HOST:1883, not '\(url)'")
        }
        var rest = Substring(url.dropFirst(7))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("@") else {
            throw Invalid("no user in the URL: give it with --mqtt-user and the password in BOBAO_MQTT_PASSWORD")
        }
        guard !rest.contains("/"), !rest.contains("?"), !rest.contains("#") else {
            throw Invalid("takes no path or query, only mqtt://HOST[:PORT], not '\(url)'")
        }
        var host = rest, portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw Invalid("'\(url)' opens [ without closing it") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw Invalid("expected :PORT after ] in '\(url)'") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        guard !host.isEmpty else { throw Invalid("names no host: '\(url)'") }
        var port = 1883
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else {
                throw Invalid("port must be 1 to 65535, not '\(portText)'")
            }
            port = number
        }
        return (String(host), port)
    }

    /// A node or group name: one topic level (no `/`, `+`, `#`), printable, at most 64 bytes.
    public static func checkLevel(_ name: String, what: String) throws(Invalid) {
        guard !name.isEmpty else { throw Invalid("\(what) must not be empty") }
        guard name.utf8.count <= 64 else { throw Invalid("\(what) '\(name)' is longer than 64 bytes") }
        guard !name.unicodeScalars.contains(where: { "/+#".unicodeScalars.contains($0) || $0.value < 0x21 || $0.value == 0x7F })
        else {
            throw Invalid("\(what) '\(name)' must be one topic level: no /, +, #, spaces or control characters")
        }
    }

    /// The prefix: levels separated by `/`, none empty, no wildcards.
    public static func checkPrefix(_ prefix: String) throws(Invalid) {
        guard !prefix.isEmpty, !prefix.hasPrefix("/"), !prefix.hasSuffix("/"), !prefix.contains("//") else {
            throw Invalid("'\(prefix)' must be one or more topic levels, like bobao or shop/bobao")
        }
        for level in prefix.split(separator: "/") { try checkLevel(String(level), what: "each level of the prefix") }
    }
}
