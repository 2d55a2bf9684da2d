import BobaoAudio
import BobaoCore
import BobaoPlatform
import BobaoSpeech
import Glibc

/// The whole pipeline: TCP listener → announcement queue → speaker → keep-alive player → PulseAudio.
public final class AnnouncementServer: Sendable {
    public let configuration: ServerConfiguration
    private let board: AnnouncementBoard
    private let player: KeepAlivePlayer
    private let speaker: Speaker
    private let ducker: StreamDucker?
    private let listener: LineListener
    private let http: HTTPServer?
    private let mqtt: MQTTClient?
    private let volume: StreamVolume
    private let log: EventLog
    private let notifier: ServiceNotifier?
    /// What happened to the last announcements, for the console and `/events`; counts for `/metrics`.
    let activity: AnnouncementActivity
    let metrics: ServerMetrics
    let startedAt = WallClock.monotonicSeconds()

    /// Binds the listening socket (so a bad address fails here, before anything else starts).
    /// - Parameter notifier: systemd's notification socket, if the service has one (see `ServiceNotifier`):
    ///   told when the server is ready, how it is doing and when it stops; its watchdog is pinged from the
    ///   player's main loop.
    /// - Throws: `SocketAddress.ResolutionError` for a host name that does not resolve, `AccessPolicy.Unsafe`
    ///   for a non-loopback address without `--token` or `--allow`, or the socket error.
    public init(
        configuration: ServerConfiguration, synthesizer: any Synthesizer, log: EventLog, notifier: ServiceNotifier? = nil
    ) throws {
        try Self.checkAccess(configuration)
        self.configuration = configuration
        self.log = log
        self.notifier = notifier
        let spool = try configuration.spoolPath.map { path throws(AnnouncementSpool.Failure) in
            try AnnouncementSpool(path: path)
        }
        let savedVolume = try spool?.streamVolume()
        board = try AnnouncementBoard(
            capacity: configuration.queueCapacity, ttlSeconds: configuration.ttlSeconds, spool: spool, log: { log($0) })
        metrics = ServerMetrics()
        activity = AnnouncementActivity(metrics: metrics)
        board.setActivity(activity)
        if let spool, board.count > 0 {
            log("restored \(board.count) announcement(s) from the spool \(spool.path); speaking them first, in order")
        }
        var playerConfiguration = configuration.player
        playerConfiguration.sampleRate = synthesizer.sampleRate
        playerConfiguration.heartbeatMilliseconds = notifier?.heartbeatMilliseconds
        var heartbeat: (@Sendable () -> Void)?
        if let notifier { heartbeat = { notifier.watchdog() } }
        player = KeepAlivePlayer(configuration: playerConfiguration, log: { log($0) }, heartbeat: heartbeat)
        volume = StreamVolume(output: player, board: board, saved: savedVolume) { log($0) }
        player.setWaitingCount { [board] in  // for the log's "holding N announcement(s)"
            let now = board.snapshot
            return now.waiting.values.reduce(now.storing, +) + (now.speaking == nil ? 0 : 1)
        }
        let ducker = StreamDucker.make(for: configuration, log: log)  // see DuckingStateFile.swift
        self.ducker = ducker
        speaker = Speaker(
            board: board, synthesizer: synthesizer, output: player, parameters: configuration.speech,
            maximumSpeechSeconds: configuration.maximumSpeechSeconds, chime: configuration.chime,
            speechActivity: { ducker?.speechActivity($0) }, log: log)
        let requests = ClientRequests(
            board: board, output: player, volume: volume, startedAt: startedAt, log: log,
            volumeChanged: { [activity] in activity.statusMayHaveChanged() })
        if let address = configuration.http {
            http = try Self.makeHTTPServer(
                address, configuration: configuration, requests: requests, board: board, output: player, volume: volume,
                activity: activity, metrics: metrics, startedAt: startedAt, log: log)
        } else {
            http = nil
        }
        mqtt = try Self.makeMQTTClient(configuration: configuration, requests: requests, metrics: metrics, log: log)
        listener = try Self.makeListener(
            configuration: configuration, requests: requests, httpAddress: http?.boundAddress, metrics: metrics, log: log)
    }

    /// The line port: sessions configured from the server's settings, announcements submitted to the board,
    /// commands carried out on it.
    private static func makeListener(
        configuration: ServerConfiguration, requests: ClientRequests, httpAddress: String?, metrics: ServerMetrics,
        log: EventLog
    ) throws -> LineListener {
        var limits = LineListener.Limits()
        limits.maximumConnections = configuration.maximumConnections
        var session = LineSession.Configuration()
        session.maximumLineBytes = configuration.maximumLineBytes
        session.token = configuration.access.token
        session.idleTimeoutSeconds = configuration.idleTimeoutSeconds
        session.encoding = configuration.encoding
        session.messageRules = configuration.messageRules
        session.httpHint = httpAddress.map { address in
            let port = address.split(separator: ":").last.map(String.init) ?? address
            return "Bobao serves HTTP on port \(port) (\(address)): POST /announce there, or open http://HOST:\(port)/ for its console."
        }
        let ledger = PeerLedger(
            rateLimiter: RateLimiter(perSecond: configuration.linesPerSecondPerPeer, burst: configuration.burstPerPeer),
            rateLimitLoopback: configuration.rateLimitLoopback, refusalTap: { metrics.refused(code: $0) })
        let access = configuration.access
        return try LineListener(
            address: configuration.listen, limits: limits, session: session, ledger: ledger,
            admits: { access.admits($0) },
            submit: requests.submit, perform: requests.perform,
            log: { log($0) },
            connectionChanged: { change in
                if change == .opened { metrics.connectionOpened(protocol: "line") } else { metrics.connectionClosed(protocol: "line") }
            })
    }

    /// Refuses to listen beyond loopback without `--token` or `--allow`, a host name counting by every address
    /// it resolves to. Also what `serve --print-config` checks, without binding.
    /// - Throws: `SocketAddress.ResolutionError` or `AccessPolicy.Unsafe`.
    public static func checkAccess(_ configuration: ServerConfiguration) throws {
        for listen in [configuration.listen] + (configuration.http.map { [$0] } ?? []) {
            let hosts = try SocketAddress.resolve(host: listen.host, port: listen.port).map(\.host)
            try configuration.access.check(listeningOn: listen, hosts: hosts)
        }
    }

    /// `host:port` actually bound.
    public var boundAddress: String { listener.boundAddress }

    /// `host:port` the HTTP server bound, if it serves.
    public var httpAddress: String? { http?.boundAddress }

    /// Starts the pipeline, then tells systemd (if it listens) that the server is ready.
    public func start() {
        if let notifier { observe(for: notifier) }
        if http != nil {
            // The console's live status: the player's changes (the board's reach the feed by itself).
            player.addStateObserver { [activity] in activity.statusMayHaveChanged() }
            activity.setStatusSource { [player, volume, board, startedAt] in
                StatusReport.line(uptimeSeconds: WallClock.monotonicSeconds() - startedAt, output: player.status,
                                  volume: volume.percent, board: board.snapshot)
            }
        }
        ducker?.start()
        player.start()
        speaker.start()
        listener.start()
        do {
            try http?.start()
        } catch {
            log(LogPriority.error + "could not serve HTTP: \(error)")
        }
        mqtt?.start()
        notifier?.ready { [player, board] in ServiceStatus.line(output: player.status, board: board.snapshot) }
    }

    /// The player and the board tell the notifier of changes; it reads their state on its own thread.
    private func observe(for notifier: ServiceNotifier) {
        if let milliseconds = notifier.heartbeatMilliseconds {
            log("systemd watchdog: pinged every \(milliseconds) ms from the player's main loop")
        }
        player.setStateObserver { notifier.changed() }
        board.setObserver { notifier.changed() }
    }

    /// Stops accepting, lets the announcement being spoken finish (for at most `timeout` seconds), and
    /// stops the player. Announcements still waiting are logged one by one, never dropped silently.
    public func shutdown(timeout: Double = 30) {
        notifier?.stopping()
        // MQTT first: what the broker has not yet handed over stays there for the next start, and the box is
        // `offline` to the fleet from now on.
        mqtt?.stop()
        // Close the board first: lines from now on are refused (`ERR shutting-down`), and every line already
        // handed to the spool is stored and answered. The listener goes on answering (clients hear why their
        // lines are refused) until everything else has stopped.
        board.close()
        defer {
            http?.stop()
            listener.stop()
        }
        let waiting = board.drain()
        for announcement in waiting { board.leftUnspoken(announcement, "before its turn") }
        if !player.isReady {
            player.stop()  // nothing can be heard without a sound server; don't wait for one
        } else if let current = speaker.speaking {
            log("finishing #\(current.id) before exit")
        }
        if !speaker.waitUntilFinished(timeout: timeout) {
            log("cut the current announcement after waiting \(Int(timeout)) s for it to finish (--shutdown-timeout)")
            player.stop()
            _ = speaker.waitUntilFinished(timeout: 5)
        }
        player.stop()
        ducker?.stop()  // the other streams' volumes back before the process exits
        activity.stop()
        board.sync()  // the last spoken announcement leaves the spool before the process does
    }
}
