import BobaoCore
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// What `/metrics` and `/events` show while announcements are spoken.
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct HTTPLiveTests {
        let sound: TestSoundServer.Connection

        init() throws {
            sound = try TestSoundServer.shared()
        }

        func start(_ arguments: [String] = []) throws -> (ServerProcess, UInt16) {
            try ServerProcess.withHTTP(arguments, sound: sound)
        }

        func checkWithPromtool(_ exposition: String) throws {
            let promtool = try #require(findProgram("promtool"), "promtool is missing: scripts/install-deps.sh installs it")
            let result = try runProgram(promtool, ["check", "metrics"], input: Data(exposition.utf8))
            #expect(result.status == 0, "promtool: \(result.stdoutText) \(result.stderr)")
        }

        /// The value of one sample line (`name{labels} value`), or nil.
        func sample(_ exposition: String, _ series: String) -> Double? {
            exposition.split(separator: "\n").first { $0.hasPrefix(series + " ") }
                .flatMap { Double($0.split(separator: " ").last ?? "") }
        }

        @Test func metricsPassPromtoolAndMoveAsAnnouncementsAreSpoken() throws {
            let (server, port) = try start()
            #expect(server.waitForLog("keep-alive stream open"))
            let before = try HTTPCall.send("GET", "/metrics", port: port)
            #expect(before.status == 200 && before.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
            try checkWithPromtool(before.body)
            #expect(sample(before.body, #"bobao_announcements_total{outcome="done"}"#) == 0)
            #expect(sample(before.body, "bobao_sound_server_up") == 1)
            #expect(before.body.contains(#"bobao_build_info{version="\#(BobaoVersion.current)"} 1"#))
            let spoken = try HTTPCall.send("POST", "/announce?wait=true", port: port, text: "新客户来了")
            #expect(spoken.string("outcome") == "done", "\(spoken.body)")
            _ = try HTTPCall.send("GET", "/nowhere", port: port)
            let line = try server.exchange("好\n")
            #expect(line == ["OK 2"])
            let after = try HTTPCall.send("GET", "/metrics", port: port)
            try checkWithPromtool(after.body)
            #expect(sample(after.body, #"bobao_announcements_total{outcome="accepted"}"#) == 2)
            #expect(sample(after.body, #"bobao_announcements_total{outcome="done"}"#) ?? 0 >= 1)
            #expect(sample(after.body, "bobao_onset_seconds_count") ?? 0 >= 1)
            #expect(sample(after.body, "bobao_speaking_seconds_sum") ?? 0 > 0.5)
            #expect(sample(after.body, #"bobao_refusals_total{code="no-such-route"}"#) == 1, "\(after.body)")
            #expect(sample(after.body, #"bobao_connections_total{protocol="http"}"#) ?? 0 >= 4)
            #expect(sample(after.body, #"bobao_connections_total{protocol="line"}"#) == 1)
            #expect(sample(after.body, #"bobao_sink_info{sink="\#(sound.sinkName)",state="playing"}"#) == 1, "\(after.body)")
            #expect(server.stop() == 0)
        }

        /// The stream starts with the status and then tells each announcement's life in order.
        @Test func eventsArriveInOrder() throws {
            let (server, port) = try start()
            #expect(server.waitForLog("keep-alive stream open"))
            let stream = try EventStreamReader(port: port)
            #expect(stream.waitFor(timeout: 10) { $0.first?.name == "status" }, "\(stream.raw)")
            #expect(try HTTPCall.send("POST", "/announce", port: port, text: "一号").status == 202)
            let second = try HTTPCall.send("POST", "/announce?wait=1", port: port, text: "二号")
            #expect(second.string("outcome") == "done")
            #expect(stream.waitFor(timeout: 10) { events in events.contains { $0.name == "done" && $0.number == 2 } }, "\(stream.raw)")
            let events = stream.events
            let ids = events.compactMap(\.id)
            #expect(ids == ids.sorted() && Set(ids).count == ids.count, "ids increase: \(ids)")
            let lives = events.filter { $0.name != "status" }.map { "\($0.name)#\($0.number ?? 0)" }
            func at(_ name: String) -> Int { lives.firstIndex(of: name) ?? -1 }
            #expect(at("accepted#1") >= 0 && at("accepted#1") < at("start#1") && at("start#1") < at("done#1"), "\(lives)")
            #expect(at("accepted#2") >= 0 && at("accepted#2") < at("start#2") && at("done#1") < at("start#2"), "\(lives)")
            #expect(at("start#2") < at("done#2"), "\(lives)")
            let done = try #require(events.first { $0.name == "done" && $0.number == 1 })
            if case .number(let onset)? = done.field("onset_ms") { #expect(onset >= 0 && onset < 2000) } else {
                Issue.record("no onset in \(done.data)")
            }
            stream.disconnect()
            #expect(server.stop() == 0)
        }

        /// A stop answers what waits and ends the streams, and does not hang on them.
        @Test func aStopEndsStreamsAndAnswersWaits() throws {
            let (server, port) = try start(["--shutdown-timeout", "1", "--no-spool"])
            #expect(server.waitForLog("keep-alive stream open"))
            let stream = try EventStreamReader(port: port)
            #expect(stream.waitFor(timeout: 10) { !$0.isEmpty })
            let long = String(repeating: "请 12 号顾客到 3 号窗口。", count: 6)
            let waiting = Thread.detachNewThreadWithResult {
                try? HTTPCall.send("POST", "/announce?wait=1", port: port, text: long, timeout: 30)
            }
            #expect(stream.waitFor(timeout: 10) { $0.contains { $0.name == "start" } })
            server.signal(SIGTERM)
            #expect(server.wait(timeout: 20) == 0)
            let answer = waiting.value(timeout: 20)
            #expect(answer != nil, "the waiting request was answered")
            if let answer { #expect([200, 503].contains(answer?.status ?? 0), "\(String(describing: answer))") }
            // The stream was closed: waiting for more returns at once, without what never came.
            let closedAt = Date()
            #expect(stream.waitFor(timeout: 5) { _ in false } == false)
            #expect(Date().timeIntervalSince(closedAt) < 4, "the stream is still open")
        }
    }
}

extension Thread {
    /// Runs `body` on a new thread; `value(timeout:)` waits for its result.
    static func detachNewThreadWithResult<T: Sendable>(_ body: @escaping @Sendable () -> T) -> ThreadResult<T> {
        let result = ThreadResult<T>()
        Thread { result.set(body()) }.start()
        return result
    }
}

final class ThreadResult<T: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: T?

    func set(_ value: T) {
        condition.withLock {
            self.value = value
            condition.broadcast()
        }
    }

    /// The result, or nil when `timeout` passes first.
    func value(timeout: Double) -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        return condition.withLock {
            while value == nil { if !condition.wait(until: deadline) { break } }
            return value
        }
    }
}
