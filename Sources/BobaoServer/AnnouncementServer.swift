import BobaoAudio
import BobaoCore
import BobaoPlatform
import BobaoSpeech
import Glibc

/// The per-peer rate limiter, used on the listener thread only.
private final class RateLimits {
    var limiter: RateLimiter
    init(_ limiter: RateLimiter) { self.limiter = limiter }
}

/// The whole pipeline: TCP listener → announcement queue → speaker → keep-alive player → PulseAudio.
public final class AnnouncementServer: Sendable {
    public let configuration: ServerConfiguration
    private let board: AnnouncementBoard
    private let player: KeepAlivePlayer
    private let speaker: Speaker
    private let listener: LineListener
    private let log: EventLog

    /// Binds the listening socket (so a bad address fails here, before anything else starts).
    /// - Throws: `AccessPolicy.Unsafe` for a non-loopback address without `--token` or `--allow`, or the
    ///   socket error.
    public init(configuration: ServerConfiguration, synthesizer: any Synthesizer, log: EventLog) throws {
        try configuration.access.check(listeningOn: configuration.listen)
        self.configuration = configuration
        self.log = log
        let spool = try configuration.spoolPath.map { path throws(AnnouncementSpool.Failure) in
            try AnnouncementSpool(path: path)
        }
        board = try AnnouncementBoard(
            capacity: configuration.queueCapacity, ttlSeconds: configuration.ttlSeconds, spool: spool)
        if let spool, board.count > 0 {
            log("restored \(board.count) announcement(s) from the spool \(spool.path); speaking them first, in order")
        }
        var playerConfiguration = configuration.player
        playerConfiguration.sampleRate = synthesizer.sampleRate
        player = KeepAlivePlayer(configuration: playerConfiguration) { log($0) }
        speaker = Speaker(
            board: board, synthesizer: synthesizer, output: player, parameters: configuration.speech,
            ttlSeconds: configuration.ttlSeconds, maximumSpeechSeconds: configuration.maximumSpeechSeconds, log: log)
        let board = self.board
        let rates = RateLimits(RateLimiter(
            perSecond: configuration.linesPerSecondPerPeer, burst: configuration.burstPerPeer))
        listener = try LineListener(
            address: configuration.listen, maximumLineBytes: configuration.maximumLineBytes,
            maximumConnections: configuration.maximumConnections, idleTimeout: configuration.idleTimeoutSeconds,
            requiresAuthentication: configuration.access.token != nil,
            admits: { host in configuration.access.admits(host) },
            onLine: { request, client in
                let access = configuration.access
                if case .blank = request { return nil }
                // With a token, the first line must present it; the token itself is never logged.
                if access.token != nil && !client.authenticated {
                    guard case .auth(let presented) = request else {
                        return LineReply(Self.refuse(.authRequired, client: client, log: log), close: true)
                    }
                    guard access.tokenMatches(presented) else {
                        return LineReply(Self.refuse(.authFailed, client: client, log: log), close: true)
                    }
                    client.authenticated = true
                    return LineReply(LineProtocol.authenticated)
                }
                switch request {
                case .blank:
                    return nil
                case .auth:
                    return LineReply(Self.refuse(access.token == nil ? .authUnexpected : .authRequired, client: client, log: log))
                case .invalid(let refusal):
                    return LineReply(Self.refuse(refusal, client: client, log: log))
                case .announce(let text):
                    guard rates.limiter.allow(client.host, now: WallClock.monotonicSeconds()) else {
                        return LineReply(Self.refuse(.rateLimited(perSecond: rates.limiter.perSecond), client: client, log: log))
                    }
                    switch board.submit(text) {
                    case .success(let announcement):
                        log("accepted #\(announcement.id) from \(client.peer): \(EventLog.quote(text))")
                        return LineReply(LineProtocol.ok(id: announcement.id))
                    case .failure(let refusal):
                        return LineReply(Self.refuse(refusal, client: client, log: log))
                    }
                }
            },
            onBusy: { peer in log("refused a connection from \(peer): busy") },
            onClose: { client in
                if client.closedIdle {
                    let why = configuration.access.token != nil && !client.authenticated
                        ? "did not authenticate in time" : "idle for \(Int(configuration.idleTimeoutSeconds)) s"
                    log("closed \(client.peer): \(why)")
                }
                let repeated = client.refusals.filter { $0.value > 1 }.sorted { $0.key < $1.key }
                guard !repeated.isEmpty else { return }
                let summary = repeated.map { "\($0.value - 1) more \($0.key)" }.joined(separator: ", ")
                log("refused from \(client.peer), not logged one by one: \(summary)")
            })
    }

    /// Logs the first refusal of each kind per connection; the rest are counted and summed up when the
    /// connection ends, so a flood of bad lines cannot flood the log.
    private static func refuse(_ refusal: LineProtocol.Refusal, client: Client, log: EventLog) -> String {
        client.refusals[refusal.code, default: 0] += 1
        if client.refusals[refusal.code] == 1 {
            log("refused a line from \(client.peer): \(refusal.code) (\(refusal.reason))")
        }
        return LineProtocol.error(refusal)
    }

    /// `host:port` actually bound.
    public var boundAddress: String { listener.boundAddress }

    public func start() {
        player.start()
        speaker.start()
        listener.start()
    }

    /// Stops accepting, lets the announcement being spoken finish (for at most `timeout` seconds), and
    /// stops the player. Announcements still waiting are logged one by one, never dropped silently.
    public func shutdown(timeout: Double = 30) {
        listener.stop()
        board.close()
        let waiting = board.drain()
        let kept = board.spool == nil ? "" : "; kept in the spool for the next start"
        for announcement in waiting {
            log("not spoken (server stopping): #\(announcement.id) \(EventLog.quote(announcement.text))\(kept)")
        }
        if !player.isReady {
            player.stop()  // nothing can be heard without a sound server; don't wait for one
        } else if let current = speaker.speaking {
            log("finishing #\(current.id) before exit")
        }
        if !speaker.waitUntilFinished(timeout: timeout) {
            let kept = board.spool == nil ? "" : "; it stays in the spool and is said after the next start"
            log("cut the current announcement after waiting \(Int(timeout)) s for it to finish\(kept)")
            player.stop()
            _ = speaker.waitUntilFinished(timeout: 5)
        }
        player.stop()
    }
}
