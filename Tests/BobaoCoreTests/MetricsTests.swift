import BobaoAudio
import BobaoCore
import BobaoServer
import BobaoTestSupport
import Dispatch
import Foundation
import Glibc
import Testing

/// `GET /metrics`: the Prometheus text format as `promtool` checks it, escaping, histograms, and the counters
/// moving with what the board, the speaker, the ledger and the listener do.
@Suite(.timeLimit(.minutes(1)))
struct MetricsTests {
    /// A missing promtool fails the test (it never skips): scripts/install-deps.sh installs it.
    @Test func promtoolAcceptsTheExposition() throws {
        let promtool = try #require(findProgram("promtool"), "promtool is missing: scripts/install-deps.sh installs it (Debian's prometheus)")
        let rig = try ActivityRig()
        rig.submit("一号请取餐")
        rig.speaker.start()
        #expect(rig.recorder.waitFor("done", 1) != nil)
        rig.metrics.connectionOpened(protocol: "line")
        rig.metrics.connectionOpened(protocol: "http")
        rig.metrics.connectionClosed(protocol: "http")
        for code in ["bad-json", "rate-limited", "bad-json", "auth-failed"] { rig.metrics.refused(code: code) }
        let output = OutputStatus(state: "playing", sink: "usb \"front\" \\ left\nright")
        let text = rig.metrics.render(output: output, board: rig.board.snapshot, uptimeSeconds: 12.5)
        let result = try runProgram(promtool, ["check", "metrics"], input: Data(text.utf8))
        #expect(result.status == 0, "promtool: \(result.stdoutText)\(result.stderr)\n\(text)")
        #expect(text.contains("bobao_sink_info{sink=\"usb \\\"front\\\" \\\\ left\\nright\",state=\"playing\"} 1\n"))
        #expect(text.contains("bobao_build_info{version=\"\(BobaoVersion.current)\"} 1\n"))
        #expect(text.contains("bobao_uptime_seconds 12.5\n") && text.contains("bobao_sound_server_up 1\n"))
        #expect(rig.finish())
    }

    @Test func aHistogramIsCumulativeWithInfSumAndCount() {
        var histogram = Histogram(bounds: [0.5, 0.25, 1])
        for value in [0.1, 0.25, 0.3, 0.9, 7, .nan] { histogram.observe(value) }
        var text = PrometheusText()
        text.histogram("x_seconds", help: "a\\b\nc", histogram)
        #expect(text.text == """
            # HELP x_seconds a\\\\b\\nc
            # TYPE x_seconds histogram
            x_seconds_bucket{le="0.25"} 2
            x_seconds_bucket{le="0.5"} 3
            x_seconds_bucket{le="1"} 4
            x_seconds_bucket{le="+Inf"} 5
            x_seconds_sum 8.55
            x_seconds_count 5

            """)
        #expect(PrometheusText.escapeLabel("a\"b\\c\nd") == "a\\\"b\\\\c\\nd")
        #expect(PrometheusText.format(.infinity) == "+Inf" && PrometheusText.format(-3) == "-3")
        #expect(PrometheusText.format(.nan) == "NaN" && PrometheusText.format(0.001) == "0.001")
    }

    @Test func countersMoveWithAnnouncements() throws {
        let rig = try ActivityRig()
        func samples() -> [String: Double] {
            Self.samples(rig.metrics.render(output: rig.output.status, board: rig.board.snapshot, uptimeSeconds: 1))
        }
        let before = samples()
        #expect(before["bobao_announcements_total{outcome=\"done\"}"] == 0)
        #expect(before["bobao_onset_seconds_count"] == 0 && before["bobao_speaking_seconds_bucket{le=\"+Inf\"}"] == 0)
        #expect(before["bobao_connections_total{protocol=\"http\"}"] == 0)
        rig.submit("一号请取餐", id: "k")
        rig.submit("一号请取餐", id: "k")  // a duplicate
        rig.submit("二号请取餐", priority: .urgent)
        #expect(samples()["bobao_queue_depth{priority=\"urgent\"}"] == 1)
        #expect(samples()["bobao_queue_depth{priority=\"normal\"}"] == 1)
        rig.speaker.start()
        #expect(rig.recorder.waitFor("done", 1) != nil)
        let after = samples()
        #expect(after["bobao_announcements_total{outcome=\"accepted\"}"] == 2)
        #expect(after["bobao_announcements_total{outcome=\"duplicate\"}"] == 1)
        #expect(after["bobao_announcements_total{outcome=\"done\"}"] == 2)
        #expect(after["bobao_onset_seconds_count"] == 2 && after["bobao_speaking_seconds_count"] == 2)
        #expect(after["bobao_onset_seconds_bucket{le=\"2\"}"] == 2, "onsets within 2 s with the fakes")
        #expect(after["bobao_queue_depth{priority=\"urgent\"}"] == 0)
        #expect(after["bobao_sink_info{sink=\"fake\",state=\"playing\"}"] == 1)
        #expect(rig.finish())
    }

    @Test func theLedgersTapCountsEveryRefusalLoggedOrNot() {
        let metrics = ServerMetrics()
        var ledger = PeerLedger(
            rateLimiter: RateLimiter(perSecond: 1, burst: 1), maximumTrackedAddresses: 1,
            refusalTap: { metrics.refused(code: $0) })
        let refusal = LineProtocol.Refusal(code: "bad-json", reason: "not JSON")
        for host in ["10.0.0.1", "10.0.0.1", "10.0.0.2"] {  // the second address is past the tracked limit
            ledger.refused(refusal, what: "a line", peer: host + ":1", host: host, now: 0)
        }
        ledger.note(code: "idle", host: "10.0.0.1", now: 0) { "closed" }
        let counts = Self.samples(metrics.render(output: OutputStatus(state: "connecting"), board: Self.emptySnapshot(), uptimeSeconds: 0))
        #expect(counts["bobao_refusals_total{code=\"bad-json\"}"] == 3 && counts["bobao_refusals_total{code=\"idle\"}"] == 1)
        #expect(ledger.takeLog().count == 2, "logged once per code and address, counted every time")
        #expect(counts["bobao_sound_server_up"] == 0 && counts.keys.allSatisfy { !$0.hasPrefix("bobao_sink_info") })
    }

    @Test func theLineListenerCountsConnectionsOpenedAndClosed() throws {
        let metrics = ServerMetrics()
        let changes = DispatchSemaphore(value: 0)
        let listener = try LineListener(
            address: ListenAddress(host: "127.0.0.1", port: 0),
            ledger: PeerLedger(rateLimiter: RateLimiter(perSecond: 0, burst: 1)),
            submit: { _, _, reply in reply(.accepted(number: 1, duplicate: false, watching: false)) },
            connectionChanged: { change in
                change == .opened ? metrics.connectionOpened(protocol: "line") : metrics.connectionClosed(protocol: "line")
                changes.signal()
            })
        listener.start()
        defer { listener.stop() }
        let port = try #require(listener.boundAddress.split(separator: ":").last.flatMap { UInt16($0) })
        let client = try Self.connect(port: port)
        #expect(changes.wait(timeout: .now() + 10) == .success)
        var counts = Self.samples(metrics.render(output: OutputStatus(state: "playing"), board: Self.emptySnapshot(), uptimeSeconds: 0))
        #expect(counts["bobao_connections_total{protocol=\"line\"}"] == 1 && counts["bobao_connections_open{protocol=\"line\"}"] == 1)
        close(client)
        #expect(changes.wait(timeout: .now() + 10) == .success)
        counts = Self.samples(metrics.render(output: OutputStatus(state: "playing"), board: Self.emptySnapshot(), uptimeSeconds: 0))
        #expect(counts["bobao_connections_total{protocol=\"line\"}"] == 1 && counts["bobao_connections_open{protocol=\"line\"}"] == 0)
    }

    /// `name{labels}` → value, from an exposition.
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            samples[String(line[..<space])] = Double(line[line.index(after: space)...])
        }
        return samples
    }

    static func emptySnapshot() -> AnnouncementBoard.Snapshot {
        (try? AnnouncementBoard(capacity: 1))!.snapshot
    }

    /// A TCP connection to 127.0.0.1:`port`.
    static func connect(port: UInt16) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(descriptor)
            throw ProgramError.notFound("a listener on 127.0.0.1:\(port) (errno \(errno))")
        }
        return descriptor
    }
}
