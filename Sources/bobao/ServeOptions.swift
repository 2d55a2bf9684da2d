import BobaoAudio
import BobaoCore
import BobaoPlatform
import BobaoServer

/// One `bobao serve` setting: its flag, its `BOBAO_…` variable, its help, and how its value is shown.
struct ServeOption: Sendable {
    let name: String
    /// What the value looks like (`N`, `HOST:PORT`); nil for a switch.
    let placeholder: String?
    let help: String
    /// The setting's value in a configuration (`--print-config`, and the default in the help).
    let show: @Sendable (ServerConfiguration, Arguments) -> String

    var variable: String { Arguments.variable(for: name) }
    var isSwitch: Bool { placeholder == nil }
    var flag: String { "--" + name + (placeholder.map { " " + $0 } ?? "") }
}

/// Every `bobao serve` setting, in the order the help, `--print-config` and README's table list them.
enum ServeOptions {
    static let all: [ServeOption] = [
        ServeOption(name: "listen", placeholder: "HOST:PORT",
                    help: "where to accept text: HOST:PORT, [IPv6]:PORT, a host name, or PORT alone (loopback); port 0 picks a free port") { c, _ in "\(c.listen)" },
        ServeOption(name: "http", placeholder: "HOST:PORT",
                    help: "also serve HTTP there: POST /announce for webhooks, the web console at /, /metrics, /events (off unless given; same access rules, the token as Authorization: Bearer)") { c, _ in
            c.http.map { "\($0)" } ?? "(off)"
        },
        ServeOption(name: "mqtt", placeholder: "URL",
                    help: "also take announcements from this MQTT broker, mqtt://HOST[:PORT] (port 1883 by default; mqtts:// is not supported yet): on PREFIX/NODE/say, PREFIX/group/GROUP/say and PREFIX/all/say") { c, _ in
            c.mqtt.map { "mqtt://\($0.brokerDescription)" } ?? "(off)"
        },
        ServeOption(name: "mqtt-user", placeholder: "NAME",
                    help: "the user name Bobao gives the broker; its password comes from BOBAO_MQTT_PASSWORD, never from the command line") { c, a in
            guard let user = c.mqtt?.user ?? a.string("mqtt-user") else { return "(none)" }
            return user + (FileSystem.environment("BOBAO_MQTT_PASSWORD").map { " (password from BOBAO_MQTT_PASSWORD, \($0.utf8.count) bytes)" } ?? " (no password)")
        },
        ServeOption(name: "node", placeholder: "NAME",
                    help: "this box's name in MQTT topics (PREFIX/NODE/say) and its client id bobao-NODE; default: the host name") { c, a in
            c.mqtt?.node ?? a.string("node") ?? "(the host name, \(ServeCommand.hostName()))"
        },
        ServeOption(name: "group", placeholder: "NAME[,NAME…]",
                    help: "MQTT groups this box belongs to, each heard on PREFIX/group/NAME/say; repeat the option or separate names with commas") { c, a in
            let groups = c.mqtt?.groups ?? ServeCommand.groups(a)
            return groups.isEmpty ? "(none)" : groups.joined(separator: ",")
        },
        ServeOption(name: "mqtt-prefix", placeholder: "PREFIX", help: "the first level(s) of every MQTT topic") { c, a in
            c.mqtt?.prefix ?? a.string("mqtt-prefix") ?? "bobao"
        },
        ServeOption(name: "token", placeholder: "SECRET",
                    help: "clients must send AUTH SECRET as their first line, HTTP clients Authorization: Bearer SECRET (BOBAO_TOKEN keeps it out of the process list)") { c, _ in
            c.access.token.map { "(set, \($0.utf8.count) bytes)" } ?? "(none)"
        },
        ServeOption(name: "allow", placeholder: "CIDR[,CIDR…]",
                    help: "only these address ranges (and loopback) may connect, e.g. 192.168.1.0/24; listening beyond loopback needs --token, --allow or both") { c, _ in
            c.access.allowed.isEmpty ? "(any)" : c.access.allowed.map(\.description).joined(separator: ",")
        },
        ServeOption(name: "voice", placeholder: "NAME", help: "the voice: zh (Bobao's Mandarin voice) or another of bobao voices") { c, _ in c.speech.voice },
        ServeOption(name: "rate", placeholder: "WPM", help: "speaking rate, 80 to 450 words a minute") { c, _ in "\(c.speech.rate)" },
        ServeOption(name: "pitch", placeholder: "N", help: "base pitch, 0 to 99") { c, _ in "\(c.speech.pitch)" },
        ServeOption(name: "volume", placeholder: "N", help: "eSpeak's volume, 0 to 200 percent (bobao volume sets the stream's)") { c, _ in "\(c.speech.volume)" },
        ServeOption(name: "sink", placeholder: "NAME", help: "the sound server's sink to play on (pactl list sinks short); default: its default sink, followed when it changes") { c, _ in
            c.player.sinkName ?? "(the default sink)"
        },
        ServeOption(name: "media-role", placeholder: "ROLE", help: "the stream's media.role, for the sound server's routing and volume policies") { c, _ in c.player.mediaRole },
        ServeOption(name: "keepalive", placeholder: "silence|noise|off",
                    help: "what plays between announcements: silence (the sink never suspends, the speaker never sleeps), noise (very faint noise, for amplifiers that switch off on digital silence) or off (the stream closes when idle; a sleeping speaker may lose the first syllable)") { c, _ in c.player.keepAlive.rawValue },
        ServeOption(name: "keepalive-level", placeholder: "DBFS", help: "the noise's peak level, -90 to -40 dBFS (with --keepalive noise; default -60)") { c, _ in
            c.player.keepAlive == .noise ? "\(Int(c.player.keepAliveLevelDBFS))" : "(unused: keepalive is not noise)"
        },
        ServeOption(name: "gap", placeholder: "MS", help: "silence between announcements, 0 to 10000 ms") { c, _ in "\(c.player.gapMilliseconds)" },
        ServeOption(name: "duck", placeholder: "FACTOR", help: "while Bobao speaks, other streams on its sink play at this factor of their volume, 0 to 1; 1 turns ducking off") { c, _ in
            "\(c.duckFactor)"
        },
        ServeOption(name: "chime", placeholder: "NAME|off", help: "a chime before every announcement that doesn't say otherwise: ding (built in) or voices/chimes/NAME.wav") { _, a in
            a.string("chime") ?? "off"
        },
        ServeOption(name: "queue", placeholder: "N", help: "announcements that may wait before lines are refused with ERR queue-full") { c, _ in "\(c.queueCapacity)" },
        ServeOption(name: "ttl", placeholder: "SECONDS", help: "an announcement not spoken within this long of being accepted is dropped and logged, never spoken late") { c, _ in
            "\(Int(c.ttlSeconds))"
        },
        ServeOption(name: "max-speech", placeholder: "SECONDS", help: "one announcement is cut after this much speech, and counts as spoken") { c, _ in
            "\(Int(c.maximumSpeechSeconds))"
        },
        ServeOption(name: "spool", placeholder: "PATH",
                    help: "the SQLite file that keeps accepted announcements until spoken: $STATE_DIRECTORY/spool.db under systemd, else $XDG_STATE_HOME/bobao/spool.db or ~/.local/state/bobao/spool.db") { c, _ in
            c.spoolPath ?? "(none: --no-spool)"
        },
        ServeOption(name: "no-spool", placeholder: nil, help: "keep accepted announcements in memory only (lost if Bobao stops)") { c, _ in
            c.spoolPath == nil ? "true" : "false"
        },
        ServeOption(name: "max-line", placeholder: "BYTES", help: "the longest line accepted, 16 to 1048576 bytes") { c, _ in "\(c.maximumLineBytes)" },
        ServeOption(name: "encoding", placeholder: "utf-8|gbk|gb18030", help: "what clients send: UTF-8, or GBK / GB18030 as Chinese Windows POS software often does") { c, _ in
            c.encoding.name.lowercased()
        },
        ServeOption(name: "max-connections", placeholder: "N", help: "open connections at most; the next gets ERR busy") { c, _ in "\(c.maximumConnections)" },
        ServeOption(name: "idle-timeout", placeholder: "SECONDS", help: "a connection is closed after this long without a line") { c, _ in
            "\(Int(c.idleTimeoutSeconds))"
        },
        ServeOption(name: "line-rate", placeholder: "LINES/S", help: "lines a second per client address after its burst; 0 turns the limit off") { c, _ in
            "\(Int(c.linesPerSecondPerPeer))"
        },
        ServeOption(name: "line-burst", placeholder: "LINES", help: "lines a client address may send at once") { c, _ in "\(Int(c.burstPerPeer))" },
        ServeOption(name: "rate-limit-loopback", placeholder: nil, help: "apply --line-rate to loopback clients too (by default they are not limited)") { c, _ in
            c.rateLimitLoopback ? "true" : "false"
        },
        ServeOption(name: "shutdown-timeout", placeholder: "SECONDS", help: "on SIGTERM, SIGINT or SIGHUP, how long the current announcement may take to finish; a second signal stops at once, keeping the spool") { c, _ in
            "\(Int(c.shutdownTimeoutSeconds))"
        },
    ]

    static var valued: Set<String> { Set(all.filter { !$0.isSwitch }.map(\.name)) }
    static var switches: Set<String> { Set(all.filter(\.isSwitch).map(\.name)) }
    /// Settings where one given as a flag drops the other's variable.
    static let contradicting = [("spool", "no-spool")]

    /// `BOBAO_…` variables in `environment` that look like a misspelt setting (within two letters of one),
    /// each with the setting meant: a typo in /etc/default/bobao would otherwise go unnoticed. Other
    /// `BOBAO_…` variables (BOBAO_VOICES, the test scripts' own) are not Bobao's concern here.
    static func misspeltVariables(in environment: [String: String]) -> [(String, String)] {
        let known = all.map(\.variable) + ["BOBAO_VOICES", "BOBAO_MQTT_PASSWORD"]
        return environment.keys.sorted().compactMap { name in
            guard name.hasPrefix("BOBAO_"), !known.contains(name) else { return nil }
            let nearest = known.map { ($0, editDistance(name, $0)) }.min { $0.1 < $1.1 }!
            return nearest.1 <= 2 ? (name, nearest.0) : nil
        }
    }

    /// Levenshtein distance between two ASCII-ish names.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

extension ServeOptions {
    static var usage: String {
        let defaults = ServerConfiguration(), noArguments = try! Arguments([], valued: [])
        var lines = [
            "usage: bobao serve [OPTIONS]",
            "Every option can also come from the environment as BOBAO_<OPTION> (--max-line: BOBAO_MAX_LINE;",
            "switches true or false), for example from /etc/default/bobao; options given here win, and",
            "--print-config shows every value and where it came from.",
        ]
        for option in all {
            var help = option.help
            let value = option.show(defaults, noArguments)
            if !value.hasPrefix("(") && !["spool", "no-spool", "rate-limit-loopback"].contains(option.name) {
                help += " (default \(value))"
            }
            lines += wrap(option.flag, help)
        }
        lines += wrap("--print-config", "print every setting, its value and where it came from (default, an option, or a BOBAO_ variable), and exit")
        lines.append("Exit status: 0 after a clean stop, 1 when serving failed (or a second stop signal), 2 for bad usage.")
        return lines.joined(separator: "\n")
    }

    /// `  --flag VALUE        help…` with the help wrapped at 110 columns.
    static func wrap(_ flag: String, _ help: String) -> [String] {
        let indent = 30
        var lines: [String] = []
        var line = "  " + flag
        line += flag.count + 2 < indent ? String(repeating: " ", count: indent - flag.count - 2) : "\n" + String(repeating: " ", count: indent)
        var width = line.split(separator: "\n").last!.count
        for word in help.split(separator: " ") {
            if width + word.count + 1 > 110 && width > indent {
                lines.append(line)
                line = String(repeating: " ", count: indent)
                width = indent
            }
            if width > indent { line += " "; width += 1 }
            line += word
            width += word.count
        }
        lines.append(line)
        return lines
    }
}
