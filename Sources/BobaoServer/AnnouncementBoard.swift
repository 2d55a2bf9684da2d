import BobaoCore
import BobaoPlatform
import Dispatch
import Glibc
import Synchronization

/// The announcement queue shared by the listener (which adds, cancels and asks) and the speaker (which
/// takes): a lock around `AnnouncementQueue`, the client keys of the last 10 minutes, the watchers of
/// messages sent with `"wait": true`, the outcome counters, and a condition the speaker waits on.
///
/// With a spool, a submission gets its id at once, in submission order, and goes to the spool's writer
/// thread (`SpoolWriter`), which stores many in one commit. It joins the queue, and its completion runs,
/// once it is on disk; so the speaker takes announcements in id order within a priority, and the queue's
/// capacity counts the ones still being written.
///
/// An urgent announcement that joins the queue while a normal or low one speaks asks the speaker (through
/// `setInterrupter`) to cut in; a normal or urgent one drops the low ones waiting.
public final class AnnouncementBoard: Sendable {
    /// A submission's answer: the message's number, and whether it was a repeat of a client key already
    /// accepted (then nothing new was queued).
    public struct Acceptance: Sendable, Equatable {
        public var number: UInt64
        public var duplicate: Bool

        public init(number: UInt64, duplicate: Bool) {
            self.number = number
            self.duplicate = duplicate
        }
    }

    /// Why the speaker should stop the announcement it is speaking.
    public enum Interruption: Sendable, Equatable {
        /// An urgent one cut in: say this one again afterwards, from its start.
        case cutIn
        /// A client cancelled or skipped it.
        case cancelled(reason: String)
    }

    public typealias Watcher = @Sendable (AnnouncementEvent) -> Void

    let state: Mutex<State>
    private let wakeSpeaker = DispatchSemaphore(value: 0)
    let writer: SpoolWriter?
    let log: @Sendable (String) -> Void

    struct State {
        var queue: AnnouncementQueue
        var closed = false
        /// Submissions given an id but not yet stored (or refused) by the writer.
        var inFlight: Set<UInt64> = []
        var speaking: Announcement?
        /// The speaker was already asked to stop `speaking`.
        var speakingInterrupted = false
        /// A client cancelled `speaking` (why): it must not go back to the queue, whatever cut it.
        var speakingCancelled: String?
        var keys = ClientKeys()
        var watchers: [UInt64: [Watcher]] = [:]
        var counters: [String: Int] = [:]
        var lastError: (message: String, at: Int64)?
        var interrupter: (@Sendable (UInt64, Interruption) -> Void)?
        /// Duplicates of a submission still being stored: answered once it is (or is refused).
        var duplicatesInFlight: [UInt64: [@Sendable (Result<Acceptance, LineProtocol.Refusal>) -> Void]] = [:]
        /// Told of changes to what waits or speaks (AnnouncementBoard+Observing.swift).
        var observers: [@Sendable () -> Void] = []
        /// Told of each announcement's events (AnnouncementBoard+Activity.swift).
        var activity: AnnouncementActivity?
    }

    /// Where accepted announcements are kept until spoken; nil keeps them in memory only.
    public let spool: AnnouncementSpool?

    /// How long an accepted announcement may wait for its turn, unless it says (`"ttl"`).
    public let ttlSeconds: Double
    private let closeTimeout: Double

    /// - Parameters:
    ///   - spool: announcements it holds are queued first, in their order, with the time to live they
    ///     had left (see `AnnouncementSpool`); new ids continue after the highest ever acknowledged; the
    ///     client keys of the last 10 minutes come back too.
    ///   - log: where the spool writer reports failures (loudly, once, then summed up), and where
    ///     cancellations by clients are logged.
    ///   - closeTimeout: how long `close` waits for the spool writer to answer what it holds.
    public init(
        capacity: Int, ttlSeconds: Double = 120, spool: AnnouncementSpool? = nil,
        log: @escaping @Sendable (String) -> Void = { _ in }, closeTimeout: Double = 10
    ) throws(AnnouncementSpool.Failure) {
        self.ttlSeconds = ttlSeconds
        self.closeTimeout = closeTimeout
        var queue = AnnouncementQueue(capacity: capacity, firstID: (spool?.lastID ?? 0) + 1)
        var keys = ClientKeys()
        if let spool {
            queue.restore(try spool.all(ttlSeconds: ttlSeconds))
            let now = WallClock.bootSeconds()
            for remembered in try spool.clientKeys(windowSeconds: keys.windowSeconds) {
                keys.remember(remembered.key, number: remembered.number, acceptedAt: now - remembered.age,
                              outcome: remembered.outcome)
            }
        }
        state = Mutex(State(queue: queue, keys: keys))
        self.spool = spool
        self.log = log
        writer = spool.map { SpoolWriter(spool: $0, log: log) }
        for _ in 0..<queue.count { wakeSpeaker.signal() }
    }

    /// Set once by the speaker: how the board asks it to stop the announcement with this number.
    public func setInterrupter(_ interrupter: @escaping @Sendable (UInt64, Interruption) -> Void) {
        state.withLock { $0.interrupter = interrupter }
    }

    // MARK: Submitting

    /// Accepts a submission or says why not. `completion` runs exactly once: at once without a spool (or
    /// for a duplicate), or on the spool writer's thread once the announcement is on disk, always before
    /// the speaker can take it (so a watcher added in it misses nothing). It must be quick and may call
    /// `watch`, nothing else of the board.
    public func submit(
        _ submission: Submission, completion: @escaping @Sendable (Result<Acceptance, LineProtocol.Refusal>) -> Void
    ) {
        let admission = state.withLock { state -> Admission in
            guard !state.closed else { return .refused(.shuttingDown) }
            let now = WallClock.bootSeconds()
            if let key = submission.options.clientID, let entry = state.keys.lookup(key, now: now) {
                state.counters["duplicate", default: 0] += 1
                // Its first is not on disk yet: the duplicate gets the first one's answer once it is known.
                if state.inFlight.contains(entry.number) {
                    state.duplicatesInFlight[entry.number, default: []].append(completion)
                    return .accepted(nil)
                }
                return .duplicate(entry.number)
            }
            // The low ones a normal or urgent submission drops leave room for it.
            let capacity = state.queue.capacity
            let droppable = submission.options.priority == .low ? 0 : state.queue.count(of: .low)
            guard state.queue.count - droppable + state.inFlight.count < capacity else {
                state.counters["refused", default: 0] += 1
                return .refused(.queueFull(capacity: capacity))
            }
            // Never reached by counting; only a tampered spool starts near it. No id beyond it is ever given.
            guard state.queue.nextAnnouncementID < AnnouncementSpool.largestID else {
                return .refused(LineProtocol.Refusal(
                    code: "spool-failed", reason: "no announcement ids are left (the spool's counter was tampered with)"))
            }
            let announcement = Announcement(
                id: state.queue.takeNextID(), text: submission.text, acceptedAt: WallClock.nowMilliseconds(),
                expiresAt: now + (submission.options.ttlSeconds ?? ttlSeconds), options: submission.options)
            if let key = submission.options.clientID { state.keys.remember(key, number: announcement.id, acceptedAt: now) }
            state.inFlight.insert(announcement.id)
            // Under the lock, so the writer receives them in id order.
            writer?.submit(.store(announcement) { [self] failure in
                guard let failure else { return self.enqueue(announcement, completion: completion) }
                let duplicates = self.state.withLock { state in
                    state.inFlight.remove(announcement.id)
                    if let key = announcement.options.clientID { state.keys.forget(key, number: announcement.id) }
                    let duplicates = state.duplicatesInFlight.removeValue(forKey: announcement.id) ?? []
                    // Its duplicates are refused with it, and counted so.
                    state.counters["refused", default: 0] += 1 + duplicates.count
                    state.counters["duplicate", default: 0] -= duplicates.count
                    return duplicates
                }
                self.changed()
                let refusal = LineProtocol.Refusal(code: "spool-failed", reason: failure.description)
                completion(.failure(refusal))
                for duplicate in duplicates { duplicate(.failure(refusal)) }
            })
            return .accepted(writer == nil ? announcement : nil)
        }
        switch admission {
        case .refused(let refusal): completion(.failure(refusal))
        case .duplicate(let number): completion(.success(Acceptance(number: number, duplicate: true)))
        case .accepted(let announcement):
            guard let announcement else { return changed() }  // being stored
            enqueue(announcement, completion: completion)
        }
    }

    /// What `submit` decided under the lock.
    private enum Admission {
        case refused(LineProtocol.Refusal)
        case duplicate(UInt64)
        /// With the announcement when it is to be queued at once (no spool writer to store it first).
        case accepted(Announcement?)
    }

    /// A stored (or, without a spool, accepted) announcement: its completion runs first, so the client's
    /// `OK` and the log's "accepted" come before anything the speaker does with it; then it joins the queue.
    private func enqueue(
        _ announcement: Announcement, completion: (Result<Acceptance, LineProtocol.Refusal>) -> Void
    ) {
        completion(.success(Acceptance(number: announcement.id, duplicate: false)))
        // Its duplicates are answered before it can be spoken, so their watchers miss nothing either; the
        // activity feed hears of it before the speaker can take it, so `accepted` comes before `start`.
        let (duplicates, activity) = state.withLock { state in
            (state.duplicatesInFlight.removeValue(forKey: announcement.id) ?? [], state.activity)
        }
        activity?.accepted(announcement)
        for duplicate in duplicates { duplicate(.success(Acceptance(number: announcement.id, duplicate: true))) }
        let (dropped, cutIn) = state.withLock { state -> ([Announcement], (UInt64, @Sendable (UInt64, Interruption) -> Void)?) in
            state.inFlight.remove(announcement.id)
            state.counters["accepted", default: 0] += 1
            let dropped = state.queue.append(announcement)
            guard announcement.priority == .urgent, let speaking = state.speaking, speaking.priority != .urgent,
                  !state.speakingInterrupted, let interrupter = state.interrupter else { return (dropped, nil) }
            state.speakingInterrupted = true
            return (dropped, (speaking.id, interrupter))
        }
        for low in dropped {
            log("dropped #\(low.id) \(EventLog.quote(low.text)) (low priority): newer work arrived while it waited; not spoken")
            finish(low, .cancelled(reason: "superseded: low priority, and newer work arrived while it waited"))
        }
        if let (number, interrupter) = cutIn { interrupter(number, .cutIn) }
        wakeSpeaker.signal()
        changed()
    }

    /// Accepts a plain `text` or says why not, waiting until it is on disk (for callers that can block;
    /// never on the spool writer's thread, from a completion).
    public func submit(_ text: String) -> Result<Announcement, LineProtocol.Refusal> {
        submit(Submission(text: text)).map { Announcement(id: $0.number, text: text) }
    }

    /// `submit`, waiting for the answer.
    public func submit(_ submission: Submission) -> Result<Acceptance, LineProtocol.Refusal> {
        let answered = DispatchSemaphore(value: 0)
        let result = Mutex<Result<Acceptance, LineProtocol.Refusal>?>(nil)
        submit(submission) { outcome in
            result.withLock { $0 = outcome }
            answered.signal()
        }
        answered.wait()
        return result.withLock { $0! }
    }

    /// Sends the events of message `number` to `watcher` from now on, until its outcome. A message that has
    /// already ended gets its outcome at once, if it is known (`clientID` finds it). Returns false when
    /// there is nothing to watch: no such message waits or speaks, and its outcome is unknown.
    public func watch(_ number: UInt64, clientID: String? = nil, _ watcher: @escaping Watcher) -> Bool {
        let known = state.withLock { state -> AnnouncementEvent?? in
            let live = state.inFlight.contains(number) || state.speaking?.id == number
                || state.queue.contains(number)
            if live {
                state.watchers[number, default: []].append(watcher)
                return .some(nil)
            }
            guard let clientID, let entry = state.keys.lookup(clientID, now: WallClock.bootSeconds()),
                  entry.number == number, let outcome = entry.outcome else { return nil }
            return .some(outcome)
        }
        guard let known else { return false }
        if let outcome = known { watcher(outcome) }
        return true
    }

    // MARK: Speaking

    /// Blocks until an announcement is waiting and takes it (it is then the one speaking); nil once closed
    /// and empty.
    public func take() -> Announcement? {
        while true {
            let next: Announcement?? = state.withLock { state in
                if let announcement = state.queue.dequeue() {
                    state.speaking = announcement
                    state.speakingInterrupted = false
                    state.speakingCancelled = nil
                    return .some(announcement)
                }
                return state.closed ? .some(nil) : nil
            }
            if let next {
                changed()
                return next
            }
            wakeSpeaker.wait()
        }
    }

    /// The speaker begins to say `announcement` (again, after an interruption).
    public func started(_ announcement: Announcement) {
        emit(.start, for: announcement)
    }

    /// The announcement's turn came but the output cannot play it yet (`reason` says why); it waits.
    public func waiting(_ announcement: Announcement, reason: String) {
        emit(.waiting(reason: reason), for: announcement)
    }

    /// Puts an announcement back at the front of its lane: it was cut (by an urgent one, when `interrupted`,
    /// or by the sound server or the shutdown) and is said again from its start. Unless a client cancelled
    /// it meanwhile: then it ends `cancelled` instead, and this returns false.
    @discardableResult
    public func requeueFirst(_ announcement: Announcement, interrupted: Bool = false) -> Bool {
        let (cancelled, activity) = state.withLock { state -> (String?, AnnouncementActivity?) in
            if state.speaking?.id == announcement.id, let reason = state.speakingCancelled { return (reason, nil) }
            state.queue.requeueFirst(announcement)
            if state.speaking?.id == announcement.id { state.speaking = nil }
            if interrupted { state.counters["interrupted", default: 0] += 1 }
            return (nil, state.activity)
        }
        if let cancelled {
            log("stopped #\(announcement.id) (\(cancelled))")
            finish(announcement, .cancelled(reason: cancelled))
            return false
        }
        // Told before the speaker is woken, so it hears of this before the announcement's next `start`.
        if interrupted { emit(.interrupted, for: announcement) } else { activity?.requeued(announcement) }
        wakeSpeaker.signal()
        changed()
        return true
    }

    /// The announcement has ended with `outcome` (spoken, cut, expired, cancelled or failed): its watchers
    /// hear it, and it leaves the spool with the writer's next commit. Does not wait for the disk, so a slow
    /// disk never lengthens the gap before the next announcement; a failure is logged by the writer (the
    /// announcement may then be said again after a restart, never lost). `sync` waits for it.
    public func finish(_ announcement: Announcement, _ outcome: AnnouncementEvent) {
        let key = announcement.options.clientID
        writer?.submit(.remove(announcement.id, settling: key.map { ($0, outcome.name) }) { _ in })
        let (watchers, activity) = state.withLock { state in
            if state.speaking?.id == announcement.id { state.speaking = nil }
            state.counters[outcome.name, default: 0] += 1
            if let key { state.keys.settle(key, number: announcement.id, outcome: outcome) }
            if case .failed(let reason) = outcome { state.lastError = (reason, WallClock.nowMilliseconds()) }
            return (state.watchers.removeValue(forKey: announcement.id) ?? [], state.activity)
        }
        activity?.record(outcome, for: announcement)
        for watcher in watchers { watcher(outcome) }
        changed()
    }

    /// Spoken in full: `finish(announcement, .done)`.
    public func finished(_ announcement: Announcement) {
        finish(announcement, .done)
    }

    /// Tells the activity feed, then the message's watchers, of an event before its outcome.
    private func emit(_ event: AnnouncementEvent, for announcement: Announcement) {
        let (watchers, activity) = state.withLock { ($0.watchers[announcement.id] ?? [], $0.activity) }
        activity?.record(event, for: announcement)
        for watcher in watchers { watcher(event) }
    }

    /// Remembers a failure for `status` (the sound server, the synthesizer).
    public func noteError(_ message: String) {
        state.withLock { $0.lastError = (message, WallClock.nowMilliseconds()) }
    }

    // MARK: State

    /// What `status` reports about the queue.
    public struct Snapshot: Sendable {
        public var waiting: [Priority: Int]
        /// Accepted and still being stored.
        public var storing: Int
        public var capacity: Int
        public var speaking: Announcement?
        /// Outcomes and other events counted since the start: accepted, duplicate, refused, done, cut,
        /// expired, cancelled, failed, interrupted.
        public var counters: [String: Int]
        public var lastError: String?
        /// Milliseconds since 1970.
        public var lastErrorAt: Int64?
    }

    public var snapshot: Snapshot {
        state.withLock { state in
            Snapshot(
                waiting: Dictionary(uniqueKeysWithValues: Priority.allCases.map { ($0, state.queue.count(of: $0)) }),
                storing: state.inFlight.count, capacity: state.queue.capacity, speaking: state.speaking,
                counters: state.counters, lastError: state.lastError?.message, lastErrorAt: state.lastError?.at)
        }
    }

    // MARK: Stopping

    /// Refuses new announcements from now on; what is queued can still be taken. Submissions already
    /// with the spool writer are stored and answered before this returns, so `drain` sees them (unless
    /// the disk hangs for `closeTimeout` seconds: then this logs it and returns; they are still answered
    /// when the writer gets to them).
    public func close() {
        let pending = state.withLock { state in
            state.closed = true
            return state.inFlight.count
        }
        if let writer, !writer.flush(timeout: closeTimeout) {
            log(LogPriority.error + "the spool writer did not store \(pending) pending announcement(s) within \(Int(closeTimeout)) s; "
                + "not waiting longer (those it stores before the process exits are still answered)")
        }
        wakeSpeaker.signal()
    }

    /// Whether what waits is safe in the spool for the next start: there is a spool and its writes work.
    public var keepsWhatWaits: Bool { writer.map { !$0.isFailing } ?? false }

    /// Why what waits is not kept (`not kept (--no-spool)`), or nil when it is.
    public var notKept: String? {
        keepsWhatWaits ? nil : spool == nil ? "not kept (--no-spool)" : "NOT kept: the spool is failing"
    }

    /// An announcement the stopping server will not speak (`when`: "before its turn", "before it was
    /// spoken"): logged; kept in the spool for the next start, or, lost, ended `failed` for its waiting
    /// clients.
    public func leftUnspoken(_ announcement: Announcement, _ when: String) {
        let kept = keepsWhatWaits ? "; kept in the spool for the next start" : spool == nil ? "" : "; \(notKept!)"
        log("not spoken (server stopping): #\(announcement.id) \(EventLog.quote(announcement.text))\(kept)")
        if let notKept { finish(announcement, .failed(reason: "the server stopped \(when); \(notKept.lowercased())")) }
    }

    /// Waiting announcements, counting those still being stored.
    public var count: Int { state.withLock { $0.queue.count + $0.inFlight.count } }

    /// Waits (at most `closeTimeout`) until everything handed to the spool writer is on disk: the last
    /// removals before the process exits.
    public func sync() {
        if let writer, !writer.flush(timeout: closeTimeout) {
            log(LogPriority.error + "the spool writer did not finish within \(Int(closeTimeout)) s; stopping without waiting for it")
        }
    }

    /// Everything still waiting, in the order it would be spoken, and empties the board.
    public func drain() -> [Announcement] {
        defer { changed() }
        return state.withLock { $0.queue.removeAll() }
    }
}
