import BobaoAudio
import BobaoCore
import BobaoPlatform
import BobaoServer
import BobaoSpeech
import Glibc

/// `bobao serve`: the announcement server.
enum ServeCommand {
    static let usage = """
        usage: bobao serve [--listen HOST:PORT] [--voice NAME] [--rate WPM] [--pitch 0-99] [--volume 0-200]
                           [--sink NAME] [--queue N] [--max-line BYTES] [--gap MS] [--media-role ROLE]
                           [--max-connections N] [--idle-timeout SECONDS] [--line-rate LINES/S] [--line-burst LINES]
                           [--token SECRET] [--allow CIDR[,CIDR…]] [--spool PATH | --no-spool] [--ttl SECONDS]
                           [--shutdown-timeout SECONDS] [--max-speech SECONDS] [--rate-limit-loopback]
                           [--chime NAME|off] [--encoding utf-8|gbk|gb18030]
                           [--keepalive silence|noise|off] [--keepalive-level DBFS] [--duck FACTOR]
          --listen   where to accept text (default 127.0.0.1:7777; port 0 picks a free port)
          --sink     PulseAudio sink to play on (default: the sound server's default sink)
          --queue    announcements that may wait before lines are refused (default 256)
          --gap      silence between announcements in milliseconds (default 300)
          --keepalive  what plays between announcements: silence (default; the sink never suspends and the
                       speaker never sleeps), noise (very faint noise, for amplifiers and active speakers
                       that switch off on digital silence) or off (the stream closes when idle and the
                       sink may suspend; the first syllable may be lost on speakers that sleep)
          --keepalive-level  the noise's peak level in dBFS, -90 to -40 (default -60)
          --max-connections  open connections at most; the next gets ERR busy (default 512)
          --idle-timeout     close a connection after this many seconds without a line (default 60)
          --token    clients must send AUTH SECRET as their first line (or set BOBAO_TOKEN, which keeps it
                     out of the process list)
          --allow    only these address ranges (and loopback) may connect, e.g. 192.168.1.0/24
                     Listening beyond loopback needs --token, --allow or both.
          --spool    SQLite file that keeps accepted announcements until spoken (default
                     $XDG_STATE_HOME/bobao/spool.db, ~/.local/state/bobao/spool.db, or
                     /var/lib/bobao/spool.db under systemd as root); --no-spool keeps them in memory only
          --ttl      an announcement not spoken within this many seconds of being accepted is dropped
                     and logged, never spoken late (default 120)
          --shutdown-timeout  on SIGTERM, SIGINT or SIGHUP, how long the current announcement may take to
                              finish (default 5); a second signal stops at once, keeping the spool
          --max-speech  one announcement is cut after this many seconds of speech, and counts as spoken
                        (default 60)
          --line-rate, --line-burst  lines a second per client address after a burst (default 20 after 40;
                             a rate of 0 turns the limit off)
          --rate-limit-loopback      apply --line-rate to loopback clients too (default: they are not limited)
          --chime    play this chime before every announcement that doesn't say otherwise: the built-in
                     ding, or voices/chimes/NAME.wav (default off; a message's "chime": true plays ding)
          --encoding what clients send: utf-8 (default), or gbk / gb18030 as Chinese Windows POS software
                     often does; each line is converted, and bytes that don't decode get ERR bad-encoding
          --duck     while Bobao speaks, other streams on its sink play at this factor of their volume,
                     0 to 1 (default 0.3: 30 % as pactl shows it); 1 turns ducking off
        """

    static func run(_ arguments: [String]) throws {
        // Block the stop signals before any thread starts, so every thread inherits the mask and they are
        // received through sigwait only.
        var stopSignals = StopSignals.set
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
        signal(SIGPIPE, SIG_IGN)

        let args = try Arguments(
            arguments, valued: Arguments.speechOptions.union([
                "listen", "sink", "queue", "max-line", "gap", "media-role", "max-connections", "idle-timeout",
                "line-rate", "line-burst", "token", "allow",
                "spool", "ttl", "shutdown-timeout", "max-speech", "chime", "encoding", "keepalive", "keepalive-level",
                "duck",
            ]),
            switches: ["help", "no-spool", "rate-limit-loopback"])
        if args.flag("help") { print(usage); return }
        guard args.positional.isEmpty else { throw CommandError.usage("serve takes no TEXT\n\(usage)") }
        var configuration = ServerConfiguration()
        configuration.speech = try args.speechParameters()
        if let listen = args.string("listen") {
            do { configuration.listen = try ListenAddress(parsing: listen) } catch {
                throw CommandError.usage("--listen: \(error.description)")
            }
        }
        configuration.player.sinkName = args.string("sink")
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
        if let token = args.string("token") ?? FileSystem.environment("BOBAO_TOKEN") {
            guard !token.isEmpty, !token.contains(where: \.isWhitespace) else {
                throw CommandError.usage("--token must be non-empty and without spaces")
            }
            configuration.access.token = token
        }
        if let allow = args.string("allow") {
            do {
                configuration.access.allowed = try allow.split(separator: ",").map {
                    try AddressRange(parsing: String($0).trimmingWhitespace())
                }
            } catch let error as AddressRange.Invalid {
                throw CommandError.usage("--allow: \(error.description)")
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
            let path = args.string("spool") ?? defaultSpoolPath()
            try createParentFolders(of: path)
            configuration.spoolPath = path
        } else if args.string("spool") != nil {
            throw CommandError.usage("--spool and --no-spool contradict each other")
        }
        if let gap = try args.int("gap", in: 0...10_000, "ms") { configuration.player.gapMilliseconds = gap }
        if let mode = try args.choice("keepalive", of: KeepAliveMode.allCases.map(\.rawValue)) {
            configuration.player.keepAlive = KeepAliveMode(rawValue: mode)!
        }
        if let level = try args.int("keepalive-level", in: -90 ... -40, "dBFS") {
            guard configuration.player.keepAlive == .noise else {
                throw CommandError.usage("--keepalive-level sets the level of --keepalive noise; add --keepalive noise")
            }
            configuration.player.keepAliveLevelDBFS = Double(level)
        }
        if let text = args.string("duck") {
            guard let factor = Double(text), factor >= 0, factor <= 1 else {
                throw CommandError.usage("--duck must be a factor from 0 to 1 (0.3 lowers other streams to 30 % "
                    + "while Bobao speaks; 1 turns ducking off), not '\(text)'")
            }
            configuration.duckFactor = factor
        }
        if let name = args.string("encoding") {
            guard let encoding = TextEncoding(name: name) else {
                throw CommandError.usage("--encoding: unknown encoding '\(name)' (\(TextEncoding.names))")
            }
            configuration.encoding = encoding
        }

        let log = EventLog()
        let synthesizer = try EspeakSynthesizer.shared()
        // An unknown voice is a start-up error, not a failure on the first announcement.
        do { _ = try synthesizer.phonemes(of: "好", voice: configuration.speech.voice) } catch {
            throw CommandError.usage("--voice: \(error)")
        }
        try configureMessages(&configuration, args: args, synthesizer: synthesizer, log: log)
        // Thousands of clients need descriptors: raise the soft limit to the hard one, here and not in the
        // listener (a process-wide change belongs to the program), and say when the limit is tight. Accepting
        // backs off rather than spinning if descriptors run out anyway.
        let before = Posix.descriptorLimit().soft
        let limit = Posix.raiseDescriptorLimit()
        log(limit != before ? "raised the open-file limit from \(before) to \(limit)" : "open-file limit \(limit)")
        if limit < configuration.maximumConnections + 64 {
            log("the open-file limit (\(limit)) is below --max-connections (\(configuration.maximumConnections)) plus "
                + "what Bobao needs for itself; clients beyond it wait until descriptors free up")
        }
        let server: AnnouncementServer
        do {
            // Under systemd with Type=notify: READY=1, STATUS=, STOPPING=1 and the watchdog (ServiceNotifier).
            server = try AnnouncementServer(
                configuration: configuration, synthesizer: synthesizer, log: log, notifier: .fromEnvironment())
        } catch let error as AccessPolicy.Unsafe {
            throw CommandError.usage(error.description)
        } catch let error as AnnouncementSpool.Failure {
            throw CommandError(description: error.description)
        } catch {
            throw CommandError(description: "cannot listen on \(configuration.listen): \(error)")
        }
        server.start()
        StandardStreams.writeOutput("listening on \(server.boundAddress)\n")
        let voiceSource: String
        switch synthesizer.voices.resolve(configuration.speech.voice) {
        case .projectFile(let path): voiceSource = path
        case .builtIn(let name): voiceSource = "eSpeak NG built-in \(name)"
        }
        log("serving on \(server.boundAddress); voice \(configuration.speech.voice) (\(voiceSource)), "
            + "\(configuration.speech.rate) wpm; queue holds \(configuration.queueCapacity)")

        let received = StopSignals.wait()
        log("received \(StopSignals.name(received)): no longer accepting; finishing the current announcement "
            + "(a second signal stops at once)")
        StopSignals.forceExitOnSecondSignal(log: log, spooled: configuration.spoolPath != nil)
        server.shutdown(timeout: configuration.shutdownTimeoutSeconds)
        log("stopped")
    }

    /// The voices and chimes a message may name, and `--chime`: the built-in `ding` and the WAVs of
    /// `voices/chimes/`, loaded once.
    static func configureMessages(
        _ configuration: inout ServerConfiguration, args: Arguments, synthesizer: EspeakSynthesizer, log: EventLog
    ) throws {
        let chimes = ChimeLibrary(
            directory: synthesizer.voices.directory.map { $0 + "/chimes" }, sampleRate: synthesizer.sampleRate,
            log: { log($0) })
        var fallback: String? = nil
        if let name = args.string("chime"), name != "off" {
            guard chimes.names.contains(name) else {
                throw CommandError.usage("--chime: no chime named '\(name)' (have: \(chimes.names.joined(separator: ", ")); or off)")
            }
            fallback = name
        }
        let serverChime = fallback
        configuration.chime = { choice in
            switch choice {
            case .off: nil
            case .serverDefault: serverChime.flatMap { chimes.samples(named: $0) }
            case .on: chimes.samples(named: serverChime ?? ChimeTone.builtInName)
            case .named(let name): chimes.samples(named: name)
            }
        }
        configuration.messageRules = MessageRules(voices: synthesizer.knownVoiceNames(), chimes: Set(chimes.names))
    }

    /// `$XDG_STATE_HOME/bobao/spool.db`; `/var/lib/bobao/spool.db` for root under systemd; else
    /// `~/.local/state/bobao/spool.db`.
    static func defaultSpoolPath() -> String {
        if let state = FileSystem.environment("XDG_STATE_HOME"), !state.isEmpty { return state + "/bobao/spool.db" }
        if getuid() == 0, FileSystem.environment("INVOCATION_ID") != nil { return "/var/lib/bobao/spool.db" }
        let home = FileSystem.environment("HOME") ?? "/root"
        return home + "/.local/state/bobao/spool.db"
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
