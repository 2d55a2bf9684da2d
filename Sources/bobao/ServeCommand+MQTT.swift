import BobaoCore
import BobaoPlatform
import BobaoServer
import Glibc

/// `--mqtt`, `--mqtt-user` (with `BOBAO_MQTT_PASSWORD`), `--node`, `--group` and `--mqtt-prefix`.
extension ServeCommand {
    /// The MQTT settings, or nil without `--mqtt`. The names are checked even then, so a typo in
    /// /etc/default/bobao shows before MQTT is turned on.
    static func mqttSettings(from args: Arguments) throws -> MQTTSettings? {
        let node = args.string("node") ?? hostName()
        let groups = Self.groups(args)
        let prefix = args.string("mqtt-prefix") ?? "bobao"
        do {
            let what = args.string("node") == nil ? "the host name (the default --node)" : "the node name"
            try MQTTSettings.checkLevel(node, what: what)
        } catch {
            throw CommandError.usage("\(args.label("node")): \(error.description)")
        }
        do {
            for group in groups { try MQTTSettings.checkLevel(group, what: "a group name") }
        } catch {
            throw CommandError.usage("\(args.label("group")): \(error.description)")
        }
        do { try MQTTSettings.checkPrefix(prefix) } catch {
            throw CommandError.usage("\(args.label("mqtt-prefix")): \(error.description)")
        }
        guard let url = args.string("mqtt") else { return nil }
        let broker: (host: String, port: Int)
        do { broker = try MQTTSettings.parseBroker(url) } catch {
            throw CommandError.usage("\(args.label("mqtt")): \(error.description)")
        }
        var settings = MQTTSettings(host: broker.host, port: broker.port, node: node)
        settings.groups = groups
        settings.prefix = prefix
        settings.user = args.string("mqtt-user")
        if let password = FileSystem.environment("BOBAO_MQTT_PASSWORD"), !password.isEmpty {
            guard settings.user != nil else {
                throw CommandError.usage(
                    "BOBAO_MQTT_PASSWORD is set but --mqtt-user is not: MQTT sends a password only with a user name")
            }
            settings.password = password
        }
        return settings
    }

    /// `--group a --group b,c` (or `BOBAO_GROUP=a,b,c`) as `[a, b, c]`, each once, in order.
    static func groups(_ args: Arguments) -> [String] {
        var seen: [String] = []
        for value in args.strings("group") {
            for name in value.split(separator: ",", omittingEmptySubsequences: false) {
                let group = String(name).trimmingWhitespace()
                if !seen.contains(group) { seen.append(group) }
            }
        }
        return seen
    }

    /// The machine's host name (its first label is what a shop calls the box), or `bobao` if it has none.
    static func hostName() -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let status = buffer.withUnsafeMutableBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { gethostname($0.baseAddress!, $0.count - 1) }
        }
        guard status == 0 else { return "bobao" }
        let name = String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
        return name.isEmpty ? "bobao" : name
    }
}
