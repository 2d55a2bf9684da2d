import BobaoAudio
import BobaoCore
import BobaoPlatform

/// The HTTP port's wiring: the same requests as the line port, and the state the routes show.
extension AnnouncementServer {
    static func makeHTTPServer(
        _ address: ListenAddress, configuration: ServerConfiguration, requests: ClientRequests, board: AnnouncementBoard,
        output: any AudioOutput, volume: StreamVolume, activity: AnnouncementActivity, metrics: ServerMetrics,
        startedAt: Double, log: EventLog
    ) throws -> HTTPServer {
        var settings = HTTPServer.Settings(address: address)
        settings.maximumBodyBytes = configuration.maximumLineBytes
        settings.maximumConnections = configuration.maximumConnections
        settings.idleTimeoutSeconds = configuration.idleTimeoutSeconds
        settings.access = configuration.access
        settings.messageRules = configuration.messageRules
        settings.encoding = configuration.encoding
        settings.linesPerSecondPerPeer = configuration.linesPerSecondPerPeer
        settings.burstPerPeer = configuration.burstPerPeer
        settings.rateLimitLoopback = configuration.rateLimitLoopback
        let services = HTTPServer.Services(
            submit: requests.submit, perform: requests.perform, sound: { output.status },
            announcements: { activity.recentJSON() },
            metrics: {
                metrics.render(output: output.status, board: board.snapshot, uptimeSeconds: WallClock.monotonicSeconds() - startedAt)
            },
            subscribe: { send in activity.subscribe { send($0.serverSentEvent) } },
            unsubscribe: { activity.unsubscribe($0) },
            connectionOpened: { metrics.connectionOpened(protocol: "http") },
            connectionClosed: { metrics.connectionClosed(protocol: "http") },
            refused: { metrics.refused(code: $0) })
        return try HTTPServer(settings: settings, services: services, log: { log($0) })
    }
}
