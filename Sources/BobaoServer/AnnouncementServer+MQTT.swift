import BobaoCore

/// The MQTT client's wiring: announcements from the broker go through the same `submit` as lines.
extension AnnouncementServer {
    /// nil without `--mqtt`.
    static func makeMQTTClient(
        configuration: ServerConfiguration, requests: ClientRequests, metrics: ServerMetrics, log: EventLog
    ) throws -> MQTTClient? {
        guard let settings = configuration.mqtt else { return nil }
        return try MQTTClient(
            settings: settings, submit: requests.submit, rules: configuration.messageRules, log: log,
            refused: { metrics.refused(code: $0) })
    }
}
