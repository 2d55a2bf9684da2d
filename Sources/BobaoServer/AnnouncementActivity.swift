import BobaoCore
import BobaoPlatform
import Dispatch
import Synchronization

/// One event of the activity feed, as `GET /events` sends it.
public struct ActivityEvent: Sendable, Equatable {
    /// Increases across all events of the feed (a subscriber may see gaps: events before it subscribed, and
    /// the first `status` of each other subscriber).
    public var sequence: UInt64
    /// `status`, `accepted`, `start`, `waiting`, `interrupted`, `done`, `cut`, `expired`, `cancelled`, `failed`.
    public var name: String
    /// One line of JSON (everything outside printable ASCII escaped).
    public var data: String

    public init(sequence: UInt64, name: String, data: String) {
        self.sequence = sequence
        self.name = name
        self.data = data
    }

    /// `id: 7\nevent: start\ndata: {…}\n\n`: the event as Server-Sent Events carry it.
    public var serverSentEvent: String { "id: \(sequence)\nevent: \(name)\ndata: \(data)\n\n" }
}

/// The board-wide activity feed behind `GET /announcements` and `GET /events`: what happened to the last 50
/// announcements (accepted, waiting, speaking, their outcome, onset and speaking time), and events for
/// subscribers, in the order they happened.
///
/// The board tells it of each announcement (`AnnouncementBoard.setActivity`), outside the board's lock; the
/// speaker of the first samples written. It never calls the board. Subscribers are called one event at a
/// time, in order, on the thread that caused the event (or the feed's status thread): a handler must be
/// quick (buffer and wake), and must not call the feed back except `unsubscribe` and `recentJSON`.
///
/// `status` events (AnnouncementActivity+Status.swift) carry the `/status` object whenever the sound state,
/// the queue or what speaks may have changed, at most every `statusInterval` seconds.
public final class AnnouncementActivity: Sendable {
    public typealias Handler = @Sendable (ActivityEvent) -> Void

    /// Announcements kept for `recentJSON`.
    public static let historyLimit = 50

    /// Where onset and speaking times are counted, if anywhere.
    let metrics: ServerMetrics?
    /// The shortest time between two `status` events, in seconds.
    let statusInterval: Double
    let state = Mutex(State())
    /// Held while an event is numbered and handed to the subscribers, so they get events in order.
    let delivering = Mutex(())
    let status = Mutex(StatusState())
    let statusWake = DispatchSemaphore(value: 0)

    struct Entry {
        var number: UInt64
        var clientID: String?
        var text: String
        var priority: Priority
        var state = "waiting"
        var reason: String?
        var acceptedAt: Int64
        var onsetMilliseconds: Double?
        var speakingMilliseconds: Double?
        /// When it last started, on the monotonic clock.
        var startedAt: Double?
        var ended = false
    }

    struct State {
        /// In ascending number order (the order accepted).
        var entries: [Entry] = []
        var sequence: UInt64 = 0
        var subscribers: [UInt64: Handler] = [:]
        var nextSubscriber: UInt64 = 1
    }

    /// - Parameters:
    ///   - metrics: told each onset and each speaking time (done or cut).
    ///   - statusInterval: the shortest time between two `status` events.
    public init(metrics: ServerMetrics? = nil, statusInterval: Double = 0.25) {
        self.metrics = metrics
        self.statusInterval = statusInterval
    }

    // MARK: Subscribers

    /// Calls `handler` with every event from now on, first with a `status` event of its own (once a status
    /// source is set: `setStatusSource`). Returns the id for `unsubscribe`. Events go out one at a time, so
    /// call it holding no lock that a handler takes (a handler may be running meanwhile, on another thread).
    /// Onset and speaking times reach `metrics` before the subscribers hear of the event.
    public func subscribe(_ handler: @escaping Handler) -> UInt64 {
        let first = currentStatus()  // read outside every lock of the feed
        return delivering.withLock { _ in
            let (id, event) = state.withLock { state -> (UInt64, ActivityEvent?) in
                let id = state.nextSubscriber
                state.nextSubscriber += 1
                state.subscribers[id] = handler
                guard let first else { return (id, nil) }
                state.sequence += 1
                return (id, ActivityEvent(sequence: state.sequence, name: "status", data: first))
            }
            if let event { handler(event) }
            return id
        }
    }

    /// No more events for this subscriber (none at all once this returns, unless called from its handler).
    public func unsubscribe(_ id: UInt64) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: id) }
    }

    /// How many subscribers there are.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Numbers an event whose data `update` makes (changing what the feed keeps), and hands it to every
    /// subscriber, in order with every other event.
    func publish(_ name: String, _ update: (inout State) -> String?) {
        delivering.withLock { _ in
            let delivery = state.withLock { state -> (ActivityEvent, [Handler])? in
                guard let data = update(&state) else { return nil }
                state.sequence += 1
                return (ActivityEvent(sequence: state.sequence, name: name, data: data), Array(state.subscribers.values))
            }
            guard let (event, handlers) = delivery else { return }
            for handler in handlers { handler(event) }
        }
    }

    // MARK: What the board and the speaker tell it

    /// Accepted and queued (not a duplicate): `accepted`.
    func accepted(_ announcement: Announcement) {
        publish("accepted") { state in
            let index = state.entry(for: announcement)
            let entry = state.entries[index]
            state.trim()
            return "{\"number\":\(entry.number),\"id\":\(Self.string(entry.clientID)),\"text\":\(JSONText.quote(entry.text)),"
                + "\"priority\":\(JSONText.quote(entry.priority.rawValue)),\"accepted_at_ms\":\(entry.acceptedAt)}"
        }
    }

    /// Any other event of an announcement: `start`, `waiting`, `interrupted` or its outcome.
    func record(_ event: AnnouncementEvent, for announcement: Announcement) {
        let now = WallClock.monotonicSeconds()
        publish(event.name) { state in
            let index = state.entry(for: announcement)
            var entry = state.entries[index]
            switch event {
            case .start:
                entry.state = "speaking"
                entry.reason = nil
                entry.startedAt = now
                entry.onsetMilliseconds = nil
                entry.speakingMilliseconds = nil
            case .waiting(let reason):
                entry.state = "waiting"
                entry.reason = reason
            case .interrupted:
                entry.state = "waiting"
                entry.reason = Self.interruptedReason
            default:
                entry.state = event.name
                entry.reason = event.reason
                entry.ended = true
                if event == .done || event == .cut, let startedAt = entry.startedAt {
                    entry.speakingMilliseconds = (now - startedAt) * 1000
                    // Counted before the subscribers hear of it, so a metric read then has it.
                    metrics?.observeSpeaking(seconds: now - startedAt)
                }
            }
            state.entries[index] = entry
            state.trim()
            return "{\"number\":\(entry.number),\"id\":\(Self.string(entry.clientID)),\"reason\":\(Self.string(entry.reason)),"
                + "\"onset_ms\":\(Self.onset(entry)),\"speaking_ms\":\(Self.speaking(entry))}"
        }
    }

    /// What an `interrupted` event and the announcement's entry give as the reason.
    static let interruptedReason = "an urgent announcement cut in; it will be said again from its start"

    /// Put back without an event (cut by the sound server, or before it began): waiting again.
    func requeued(_ announcement: Announcement) {
        state.withLock { state in
            let index = state.entry(for: announcement)
            state.entries[index].state = "waiting"
            state.entries[index].reason = nil
            state.trim()
        }
    }

    /// The speaker wrote the first samples of `announcement` since it last started: its onset.
    public func firstSamplesWritten(_ announcement: Announcement) {
        let now = WallClock.monotonicSeconds()
        let onset = state.withLock { state -> Double? in
            guard let index = state.entries.lastIndex(where: { $0.number == announcement.id }),
                  let startedAt = state.entries[index].startedAt, state.entries[index].onsetMilliseconds == nil
            else { return nil }
            state.entries[index].onsetMilliseconds = (now - startedAt) * 1000
            return now - startedAt
        }
        if let onset { metrics?.observeOnset(seconds: onset) }
    }

    // MARK: Rendering

    /// `{"announcements":[…]}`: the last 50, newest first (`GET /announcements`).
    public func recentJSON() -> String {
        let entries = state.withLock { $0.entries }
        let items = entries.reversed().map { entry in
            "{\"number\":\(entry.number),\"id\":\(Self.string(entry.clientID)),\"text\":\(JSONText.quote(entry.text)),"
                + "\"priority\":\(JSONText.quote(entry.priority.rawValue)),\"state\":\(JSONText.quote(entry.state)),"
                + "\"reason\":\(Self.string(entry.reason)),\"accepted_at_ms\":\(entry.acceptedAt),"
                + "\"onset_ms\":\(Self.onset(entry)),\"speaking_ms\":\(Self.speaking(entry))}"
        }
        return "{\"announcements\":[" + items.joined(separator: ",") + "]}"
    }

    static func string(_ value: String?) -> String { value.map(JSONText.quote) ?? "null" }

    /// Milliseconds to a tenth: `12.3`; `null` when not (yet) known.
    static func onset(_ entry: Entry) -> String {
        guard let milliseconds = entry.onsetMilliseconds, milliseconds.isFinite else { return "null" }
        let tenths = Int((max(milliseconds, 0) * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// Whole milliseconds: `1520`; `null` when not spoken to its end (or cut).
    static func speaking(_ entry: Entry) -> String {
        guard let milliseconds = entry.speakingMilliseconds, milliseconds.isFinite else { return "null" }
        return "\(Int(max(milliseconds, 0).rounded()))"
    }
}

extension AnnouncementActivity.State {
    /// The index of `announcement`'s entry, made from the announcement when the feed has none (one restored
    /// from the spool, or one older than the last 50).
    mutating func entry(for announcement: Announcement) -> Int {
        if let index = entries.lastIndex(where: { $0.number == announcement.id }) { return index }
        let entry = AnnouncementActivity.Entry(
            number: announcement.id, clientID: announcement.options.clientID, text: announcement.text,
            priority: announcement.priority, acceptedAt: announcement.acceptedAt)
        let index = entries.lastIndex { $0.number < announcement.id }.map { $0 + 1 } ?? 0
        entries.insert(entry, at: index)
        return index
    }

    /// Keeps the last `historyLimit`: the oldest that has ended leaves first, so one still waiting or
    /// speaking stays listed while it can.
    mutating func trim() {
        while entries.count > AnnouncementActivity.historyLimit {
            entries.remove(at: entries.firstIndex(where: \.ended) ?? 0)
        }
    }
}
