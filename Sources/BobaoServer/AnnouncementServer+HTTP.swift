import BobaoAudio
import BobaoCore
import BobaoPlatform

/// The HTTP port's wiring: the same requests as the line port, and the state the routes show.
extension AnnouncementServer {
    static func makeHTTPServer(
        _ address: ListenAddress, configuration: ServerConfiguration, requests: ClientRequests, board: AnnouncementBoard,
        output: any AudioOutput, volume: StreamVolume, log: EventLog
    ) throws -> HTTPServer {
        var settings = HTTPServer.Settings(address: address)
        settings.maximumBodyBytes = configuration.maximumLineBytes
        settings.maximumConnections = configuration.maximumConnections
        settings.idleTimeoutSeconds = configuration.idleTimeoutSeconds
        settings.access = configuration.access
        settings.messageRules = configuration.messageRules
        settings.linesPerSecondPerPeer = configuration.linesPerSecondPerPeer
        settings.burstPerPeer = configuration.burstPerPeer
        settings.rateLimitLoopback = configuration.rateLimitLoopback
        let startedAt = WallClock.monotonicSeconds()
        let status: @Sendable () -> String = {
            let line = StatusReport.line(
                uptimeSeconds: WallClock.monotonicSeconds() - startedAt, output: output.status, volume: volume.percent,
                board: board.snapshot)
            return line.hasSuffix("\n") ? String(line.dropLast()) : line
        }
        let services = HTTPServer.Services(
            submit: requests.submit, perform: requests.perform, status: status, sound: { output.status },
            announcements: { "{\"announcements\":[]}\n" },
            metrics: { "# TYPE bobao_build_info gauge\nbobao_build_info{version=\"\(BobaoVersion.current)\"} 1\n" },
            subscribe: { send in
                send("event: status\ndata: \(status())\n\n")
                return 0
            },
            unsubscribe: { _ in })
        return try HTTPServer(settings: settings, services: services, log: { log($0) })
    }
}
