import BobaoAudio
import BobaoCore
import BobaoPlatform
import BobaoServer
import BobaoSpeech
import Glibc

/// `bobao serve`: the announcement server.
enum ServeCommand {
    static var usage: String { ServeOptions.usage }

    static func run(_ arguments: [String]) throws {
        // Block the stop signals before any thread starts, so every thread inherits the mask and they are
        // received through sigwait only.
        var stopSignals = StopSignals.set
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
        signal(SIGPIPE, SIG_IGN)

        var args = try Arguments(arguments, valued: ServeOptions.valued, switches: ServeOptions.switches.union(["print-config"]))
        guard args.positional.isEmpty else {
            throw CommandError.usage("serve takes no TEXT (unexpected '\(args.positional[0])'); send text with bobao say or nc")
        }
        let environment = FileSystem.environment()
        try args.addEnvironment(
            environment, valued: ServeOptions.valued, switches: ServeOptions.switches,
            contradicting: ServeOptions.contradicting)
        var configuration = try configuration(from: args)
        let log = EventLog()
        for (variable, meant) in ServeOptions.misspeltVariables(in: environment) {
            log(LogPriority.warning + "\(variable) is set but no setting reads it; did you mean \(meant)? (ignored)")
        }
        let synthesizer = try EspeakSynthesizer.shared()
        // An unknown voice is a start-up error, not a failure on the first announcement.
        do { _ = try synthesizer.phonemes(of: "好", voice: configuration.speech.voice) } catch {
            throw CommandError.usage((args.source("voice").map { "\($0): " } ?? "") + "\(error)")
        }
        try configureMessages(&configuration, args: args, synthesizer: synthesizer, log: log)
        if args.flag("print-config") {
            // What serve would refuse, --print-config refuses too: listening beyond loopback unguarded.
            do { try AnnouncementServer.checkAccess(configuration) } catch let error as AccessPolicy.Unsafe {
                throw CommandError.usage(error.description)
            } catch {
                throw CommandError(description: "cannot listen on \(configuration.listen): \(error)")
            }
            return printConfiguration(configuration, args: args, voices: synthesizer.voices)
        }
        if let spool = configuration.spoolPath { try createParentFolders(of: spool) }
        // Thousands of clients need descriptors: raise the soft limit to the hard one, here and not in the
        // listener (a process-wide change belongs to the program), and say when the limit is tight. Accepting
        // backs off rather than spinning if descriptors run out anyway.
        let before = Posix.descriptorLimit().soft
        let limit = Posix.raiseDescriptorLimit()
        log(limit != before ? "raised the open-file limit from \(before) to \(limit)" : "open-file limit \(limit)")
        if limit < configuration.maximumConnections + 64 {
            log(LogPriority.warning + "the open-file limit (\(limit)) is below --max-connections (\(configuration.maximumConnections)) plus "
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
        StandardStreams.writeOutput("listening on \(server.boundAddress)\n" + (server.httpAddress.map { "http on \($0)\n" } ?? ""))
        let voiceSource = describeVoice(configuration.speech.voice, in: synthesizer.voices)
        if let http = server.httpAddress {
            let port = http.split(separator: ":").last.map(String.init) ?? http
            let everywhere = http.hasPrefix("0.0.0.0:") || http.hasPrefix("[::]:")
            log(everywhere
                ? "serving HTTP on port \(port) of every address of this machine: open http://THIS-MACHINE'S-ADDRESS:\(port)/ "
                    + "for the console; webhooks POST to /announce"
                : "serving HTTP on http://\(http)/ (the console at /, webhooks at POST /announce)")
        }
        log("serving on \(server.boundAddress); voice \(configuration.speech.voice) (\(voiceSource)), "
            + "\(configuration.speech.rate) wpm; queue holds \(configuration.queueCapacity); "
            + (configuration.spoolPath.map { "spool \($0)" } ?? "no spool: what waits is lost if Bobao stops (--no-spool)"))

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
                throw CommandError.usage("\(args.label("chime")): no chime named '\(name)' (have: \(chimes.names.joined(separator: ", ")); or off)")
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
}
