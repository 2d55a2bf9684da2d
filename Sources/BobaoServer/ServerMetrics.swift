import BobaoAudio
import BobaoCore
import Synchronization

/// What `GET /metrics` reports, in Prometheus's text format (`PrometheusText`): counters the server keeps
/// here (connections, refusals, onset and speaking times), and gauges and counters read from the board's
/// snapshot and the output's status when rendered. Any thread.
public final class ServerMetrics: Sendable {
    /// Upper bounds of `bobao_onset_seconds`: 1 ms to 2 s.
    public static let onsetBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2]
    /// Upper bounds of `bobao_speaking_seconds`: 0.25 s to 60 s.
    public static let speakingBuckets: [Double] = [0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60]
    /// The protocols always listed, at 0 before their first connection.
    public static let protocols = ["line", "http"]
    /// The board's counters that `bobao_announcements_total` reports, by outcome.
    public static let outcomes = ["accepted", "duplicate", "done", "cut", "expired", "cancelled", "failed", "interrupted"]

    private struct Counts {
        var opened: [String: UInt64] = [:]
        var open: [String: Int] = [:]
        var refusals: [String: UInt64] = [:]
        var onset = Histogram(bounds: ServerMetrics.onsetBuckets)
        var speaking = Histogram(bounds: ServerMetrics.speakingBuckets)
    }

    private let counts = Mutex(Counts())

    public init() {}

    /// A client connected (`line`, `http`).
    public func connectionOpened(protocol name: String) {
        counts.withLock { counts in
            counts.opened[name, default: 0] += 1
            counts.open[name, default: 0] += 1
        }
    }

    /// A connection counted by `connectionOpened` closed.
    public func connectionClosed(protocol name: String) {
        counts.withLock { $0.open[name, default: 0] -= 1 }
    }

    /// Something was refused with this code (`PeerLedger`'s refusal tap sees them all).
    public func refused(code: String) {
        counts.withLock { $0.refusals[code, default: 0] += 1 }
    }

    /// From the speaker beginning an announcement to its first samples written (the activity feed tells it).
    public func observeOnset(seconds: Double) {
        counts.withLock { $0.onset.observe(seconds) }
    }

    /// How long an announcement spoke, for those done or cut (the activity feed tells it).
    public func observeSpeaking(seconds: Double) {
        counts.withLock { $0.speaking.observe(seconds) }
    }

    /// The exposition, text format 0.0.4 (`Content-Type: text/plain; version=0.0.4`).
    public func render(output: OutputStatus, board: AnnouncementBoard.Snapshot, uptimeSeconds: Double) -> String {
        let counts = self.counts.withLock { $0 }
        var text = PrometheusText()
        text.family("bobao_build_info", .gauge, help: "Bobao's version; always 1.")
        text.sample("bobao_build_info", ["version": BobaoVersion.current], value: 1)
        text.family("bobao_announcements_total", .counter, help: "Announcements by what happened to them since the start.")
        for outcome in Self.outcomes {
            text.sample("bobao_announcements_total", ["outcome": outcome], value: Double(board.counters[outcome] ?? 0))
        }
        text.family("bobao_queue_depth", .gauge, help: "Announcements waiting, by priority.")
        for priority in Priority.allCases {
            text.sample("bobao_queue_depth", ["priority": priority.rawValue], value: Double(board.waiting[priority] ?? 0))
        }
        text.histogram(
            "bobao_onset_seconds", help: "From the speaker taking an announcement to its first samples written to the stream.",
            counts.onset)
        text.histogram("bobao_speaking_seconds", help: "How long announcements spoke (done or cut).", counts.speaking)
        text.family("bobao_sound_server_up", .gauge, help: "1 while connected to the sound server, else 0.")
        text.sample("bobao_sound_server_up", value: Self.isConnected(output) ? 1 : 0)
        text.family("bobao_sink_info", .gauge, help: "The sink the stream plays to, with the output's state; always 1.")
        if let sink = output.sink { text.sample("bobao_sink_info", ["sink": sink, "state": output.state], value: 1) }
        text.family("bobao_connections_total", .counter, help: "Client connections accepted, by protocol.")
        for name in Self.names(Self.protocols, counts.opened.keys) {
            text.sample("bobao_connections_total", ["protocol": name], value: Double(counts.opened[name] ?? 0))
        }
        text.family("bobao_connections_open", .gauge, help: "Client connections open now, by protocol.")
        for name in Self.names(Self.protocols, counts.open.keys) {
            text.sample("bobao_connections_open", ["protocol": name], value: Double(max(counts.open[name] ?? 0, 0)))
        }
        text.family("bobao_refusals_total", .counter, help: "Lines, requests and connections refused, by error code.")
        for code in counts.refusals.keys.sorted() {
            text.sample("bobao_refusals_total", ["code": code], value: Double(counts.refusals[code]!))
        }
        text.family("bobao_uptime_seconds", .gauge, help: "Seconds since the server started.")
        text.sample("bobao_uptime_seconds", value: (uptimeSeconds * 1000).rounded() / 1000)
        return text.text
    }

    /// Whether the output is connected to the sound server (even without a sink or corked).
    static func isConnected(_ output: OutputStatus) -> Bool {
        ["playing", "idle", "no-sink", "corked"].contains(output.state)
    }

    /// `fixed` in order, then any others seen, sorted.
    private static func names(_ fixed: [String], _ seen: Dictionary<String, some Any>.Keys) -> [String] {
        fixed + seen.filter { !fixed.contains($0) }.sorted()
    }
}
