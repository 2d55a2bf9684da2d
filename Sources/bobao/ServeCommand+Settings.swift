import BobaoAudio
import BobaoCore
import BobaoPlatform
import BobaoServer
import BobaoSpeech
import Glibc

/// `bobao serve`'s settings: from its options and `BOBAO_…` variables to a `ServerConfiguration`, and
/// `--print-config`.
extension ServeCommand {
    /// Every setting checked: a bad value is a usage error naming the option or the variable it came from.
    static func configuration(from args: Arguments) throws -> ServerConfiguration {
        for name in ServeOptions.valued.sorted() where args.string(name)?.isEmpty == true {
            throw CommandError.usage("\(args.label(name)) needs a value")
        }
        var configuration = ServerConfiguration()
        configuration.speech = try args.speechParameters()
        if let listen = args.string("listen") {
            do { configuration.listen = try ListenAddress(parsing: listen) } catch {
                throw CommandError.usage("\(args.label("listen")): \(error.description)")
            }
        }
        if let http = args.string("http") {
            do { configuration.http = try ListenAddress(parsing: http) } catch {
                throw CommandError.usage("\(args.label("http")): \(error.description)")
            }
        }
        configuration.mqtt = try mqttSettings(from: args)
        if let sink = args.string("sink") { configuration.player.sinkName = sink }
        if let role = args.string("media-role") { configuration.player.mediaRole = role }
        // Every number has an upper bound too: a typo must be an error, never an overflow later.
        let day = 86_400
        if let queue = try args.int("queue", in: 1...1_000_000, "announcements") { configuration.queueCapacity = queue }
        if let maximum = try args.int("max-line", in: 16...1 << 20, "bytes") { configuration.maximumLineBytes = maximum }
        if let limit = try args.int("max-connections", in: 1...1_000_000, "connections") {
            configuration.maximumConnections = limit
        }
        if let seconds = try args.int("idle-timeout", in: 1...day, "seconds") {
            configuration.idleTimeoutSeconds = Double(seconds)
        }
        if let rate = try args.int("line-rate", in: 0...1_000_000, "lines a second (0: off)") {
            configuration.linesPerSecondPerPeer = Double(rate)
        }
        if let burst = try args.int("line-burst", in: 1...1_000_000, "lines") { configuration.burstPerPeer = Double(burst) }
        if let token = args.string("token") {
            guard !token.contains(where: { $0.isWhitespace || $0.unicodeScalars.contains { $0.value < 0x20 } }) else {
                throw CommandError.usage("\(args.label("token")) must be without spaces or control characters")
            }
            configuration.access.token = token
        }
        if let allow = args.string("allow") {
            do {
                configuration.access.allowed = try allow.split(separator: ",").map {
                    try AddressRange(parsing: String($0).trimmingWhitespace())
                }
            } catch let error as AddressRange.Invalid {
                throw CommandError.usage("\(args.label("allow")): \(error.description)")
            }
        }
        if let seconds = try args.int("shutdown-timeout", in: 0...3600, "seconds") {
            configuration.shutdownTimeoutSeconds = Double(seconds)
        }
        if let seconds = try args.int("max-speech", in: 1...3600, "seconds") {
            configuration.maximumSpeechSeconds = Double(seconds)
        }
        configuration.rateLimitLoopback = args.flag("rate-limit-loopback")
        if let ttl = try args.int("ttl", in: 1...30 * day, "seconds") { configuration.ttlSeconds = Double(ttl) }
        if !args.flag("no-spool") {
            configuration.spoolPath = args.string("spool") ?? defaultSpoolPath()
        } else if args.string("spool") != nil {
            throw CommandError.usage("\(args.label("spool")) and \(args.label("no-spool")) contradict each other")
        }
        if let gap = try args.int("gap", in: 0...10_000, "ms") { configuration.player.gapMilliseconds = gap }
        if let mode = try args.choice("keepalive", of: KeepAliveMode.allCases.map(\.rawValue)) {
            configuration.player.keepAlive = KeepAliveMode(rawValue: mode)!
        }
        // A level from the environment gives way to a --keepalive flag that is not noise (flags win).
        let levelGivesWay = configuration.player.keepAlive != .noise && args.source("keepalive") == "--keepalive"
            && args.source("keepalive-level") != "--keepalive-level"
        if let level = try args.int("keepalive-level", in: -90 ... -40, "dBFS"), !levelGivesWay {
            guard configuration.player.keepAlive == .noise else {
                let keepalive = args.source("keepalive").map { "\($0) says \(configuration.player.keepAlive.rawValue)" }
                    ?? "add --keepalive noise (or BOBAO_KEEPALIVE=noise)"
                throw CommandError.usage("\(args.label("keepalive-level")) sets the level of --keepalive noise; \(keepalive)")
            }
            configuration.player.keepAliveLevelDBFS = Double(level)
        }
        if let text = args.string("duck") {
            guard let factor = Double(text), factor >= 0, factor <= 1 else {
                throw CommandError.usage("\(args.label("duck")) must be a factor from 0 to 1 (0.3 lowers other streams to 30 % "
                    + "while Bobao speaks; 1 turns ducking off), not '\(text)'")
            }
            configuration.duckFactor = factor
        }
        if let name = args.string("encoding") {
            guard let encoding = TextEncoding(name: name) else {
                throw CommandError.usage("\(args.label("encoding")): unknown encoding '\(name)' (\(TextEncoding.names))")
            }
            configuration.encoding = encoding
        }
        return configuration
    }

    /// `--print-config`: each setting, its value, and where it came from.
    static func printConfiguration(_ configuration: ServerConfiguration, args: Arguments, voices: VoiceCatalog) {
        let rows = ServeOptions.all.map { option in
            (option.name, option.show(configuration, args), args.source(option.name) ?? "default")
        }
        let nameWidth = rows.map(\.0.count).max()! + 2
        let valueWidth = min(rows.map(\.1.count).max()!, 40) + 2
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(1, width - text.count))
        }
        var lines = ["# bobao serve settings: value, and where it came from (default, --option, or BOBAO_ variable)"]
        lines += rows.map { pad($0.0, nameWidth) + pad($0.1, valueWidth) + $0.2 }
        lines.append("# voice \(configuration.speech.voice): \(describeVoice(configuration.speech.voice, in: voices))")
        StandardStreams.writeOutput(lines.joined(separator: "\n") + "\n")
    }

    /// Where a voice comes from, for the log and `--print-config`.
    static func describeVoice(_ name: String, in voices: VoiceCatalog) -> String {
        switch voices.resolve(name) {
        case .projectFile(let path): voices.isBuiltIntoProgram(path: path) ? "built into bobao" : path
        case .unavailable(_, let reason): "unavailable: \(reason)"
        case .builtIn(let name): "eSpeak NG built-in \(name)"
        }
    }

    /// `$STATE_DIRECTORY/spool.db` under systemd with `StateDirectory=`; `$XDG_STATE_HOME/bobao/spool.db`;
    /// `/var/lib/bobao/spool.db` for root under systemd; else `~/.local/state/bobao/spool.db`.
    static func defaultSpoolPath() -> String {
        if let state = FileSystem.environment("STATE_DIRECTORY"), !state.isEmpty {
            // systemd lists one folder per StateDirectory= entry, separated by colons: the first is Bobao's.
            if let first = state.split(separator: ":").first { return String(first) + "/spool.db" }
        }
        if let state = FileSystem.environment("XDG_STATE_HOME"), !state.isEmpty { return state + "/bobao/spool.db" }
        if getuid() == 0, FileSystem.environment("INVOCATION_ID") != nil { return "/var/lib/bobao/spool.db" }
        return homeFolder() + "/.local/state/bobao/spool.db"
    }

    /// `$HOME`, else the user's home from the password database, else `/`.
    static func homeFolder() -> String {
        if let home = FileSystem.environment("HOME"), !home.isEmpty { return home }
        if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir { return String(cString: directory) }
        return "/"
    }

    static func createParentFolders(of path: String) throws {
        var folder = path.hasPrefix("/") ? "" : "."
        for part in FileSystem.parent(of: path).split(separator: "/") {
            folder += "/" + part
            if !FileSystem.isDirectory(folder) && mkdir(folder, 0o700) != 0 && errno != EEXIST {
                throw CommandError(description: "cannot create \(folder) for the spool: \(String(cString: strerror(errno)))")
            }
        }
    }
}
