import BobaoAudio
import BobaoCore
import BobaoServer
import Foundation

/// A subscriber of an `AnnouncementActivity` that keeps its events, for tests to read and wait on.
final class ActivityRecorder: @unchecked Sendable {
    private let condition = NSCondition()
    private var events: [(event: ActivityEvent, at: Double)] = []

    var handler: AnnouncementActivity.Handler {
        { [self] event in
            let now = ProcessInfo.processInfo.systemUptime
            condition.withLock {
                events.append((event, now))
                condition.broadcast()
            }
        }
    }

    /// Every event so far, in the order received.
    var all: [ActivityEvent] { condition.withLock { events.map(\.event) } }

    /// When each event arrived (seconds on a monotonic clock), in order.
    var arrivals: [(event: ActivityEvent, at: Double)] { condition.withLock { events } }

    /// The names of the events about announcement `number`, in order.
    func names(of number: UInt64) -> [String] {
        all.filter { $0.name != "status" && Self.object($0.data)["number"] as? UInt64 == number }.map(\.name)
    }

    /// Waits (at most `timeout` seconds, waking on every event) for the first event that `matches`.
    @discardableResult
    func waitFor(timeout: Double = 10, _ matches: (ActivityEvent) -> Bool) -> ActivityEvent? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let found = events.first(where: { matches($0.event) }) { return found.event }
            if !condition.wait(until: deadline) { return events.first { matches($0.event) }?.event }
        }
    }

    /// Waits for event `name` about announcement `number`.
    @discardableResult
    func waitFor(_ name: String, _ number: UInt64, timeout: Double = 10) -> ActivityEvent? {
        waitFor(timeout: timeout) { $0.name == name && Self.object($0.data)["number"] as? UInt64 == number }
    }

    /// A JSON object's fields (empty when `text` is not one).
    static func object(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }
}

/// A board with an activity feed and metrics, a speaker on fakes, and a subscriber recording the events.
struct ActivityRig {
    let board: AnnouncementBoard
    let activity: AnnouncementActivity
    let metrics = ServerMetrics()
    let recorder = ActivityRecorder()
    let output = FakeAudioOutput()
    let log = RecordedLog()
    let speaker: Speaker

    init(capacity: Int = 64, synthesizer: FakeSynthesizer = FakeSynthesizer(), statusInterval: Double = 0.25) throws {
        board = try AnnouncementBoard(capacity: capacity, ttlSeconds: 120)
        activity = AnnouncementActivity(metrics: metrics, statusInterval: statusInterval)
        board.setActivity(activity)
        speaker = Speaker(
            board: board, synthesizer: synthesizer, output: output, parameters: SpeechParameters(), log: log.eventLog)
        _ = activity.subscribe(recorder.handler)
    }

    /// Submits and waits until it is queued; returns its number.
    @discardableResult
    func submit(_ text: String, priority: Priority = .normal, id: String? = nil) -> UInt64 {
        var options = MessageOptions()
        options.priority = priority
        options.clientID = id
        guard case .success(let acceptance) = board.submit(Submission(text: text, options: options)) else {
            preconditionFailure("\(text) refused")
        }
        return acceptance.number
    }

    /// The announcements `recentJSON` lists, newest first.
    var recent: [[String: Any]] {
        ActivityRecorder.object(activity.recentJSON())["announcements"] as? [[String: Any]] ?? []
    }

    /// Closes the board, waits for the speaker to stop, and stops the status thread.
    func finish() -> Bool {
        board.close()
        defer { activity.stop() }
        return speaker.waitUntilFinished(timeout: 10)
    }
}
