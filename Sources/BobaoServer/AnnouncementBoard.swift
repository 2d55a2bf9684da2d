import BobaoCore
import BobaoPlatform
import Dispatch
import Glibc
import Synchronization

/// The announcement queue shared by the listener (which adds) and the speaker (which takes): a lock
/// around `AnnouncementQueue` and a condition the speaker waits on.
///
/// With a spool, a submission gets its id at once, in submission order, and goes to the spool's writer
/// thread (`SpoolWriter`), which stores many in one commit. It joins the queue, and its completion runs,
/// once it is on disk; so the speaker takes announcements in id order, and the queue's capacity counts the
/// ones still being written.
public final class AnnouncementBoard: Sendable {
    private let state: Mutex<State>
    private let wakeSpeaker = DispatchSemaphore(value: 0)
    private let writer: SpoolWriter?
    private let log: @Sendable (String) -> Void

    private struct State {
        var queue: AnnouncementQueue
        var closed = false
        /// Submissions given an id but not yet stored (or refused) by the writer.
        var inFlight = 0
    }

    /// Where accepted announcements are kept until spoken; nil keeps them in memory only.
    public let spool: AnnouncementSpool?

    /// How long an accepted announcement may wait for its turn.
    public let ttlSeconds: Double
    private let closeTimeout: Double

    /// - Parameters:
    ///   - spool: announcements it holds are queued first, in their order, with the time to live they
    ///     had left (see `AnnouncementSpool`); new ids continue after the highest ever acknowledged.
    ///   - log: where the spool writer reports failures (loudly, once, then summed up).
    ///   - closeTimeout: how long `close` waits for the spool writer to answer what it holds.
    public init(
        capacity: Int, ttlSeconds: Double = 120, spool: AnnouncementSpool? = nil,
        log: @escaping @Sendable (String) -> Void = { _ in }, closeTimeout: Double = 10
    ) throws(AnnouncementSpool.Failure) {
        self.ttlSeconds = ttlSeconds
        self.closeTimeout = closeTimeout
        var queue = AnnouncementQueue(capacity: capacity, firstID: (spool?.lastID ?? 0) + 1)
        if let spool { queue.restore(try spool.all(ttlSeconds: ttlSeconds)) }
        state = Mutex(State(queue: queue))
        self.spool = spool
        self.log = log
        writer = spool.map { SpoolWriter(spool: $0, log: log) }
        for _ in 0..<queue.count { wakeSpeaker.signal() }
    }

    /// Accepts `text` or says why not. `completion` runs exactly once: at once without a spool, or on the
    /// spool writer's thread once the announcement is on disk. It must be quick and must not call back
    /// into the board.
    public func submit(
        _ text: String, completion: @escaping @Sendable (Result<Announcement, LineProtocol.Refusal>) -> Void
    ) {
        let accepted = state.withLock { state -> Result<Announcement, LineProtocol.Refusal> in
            guard !state.closed else { return .failure(.shuttingDown) }
            let capacity = state.queue.capacity
            guard state.queue.count + state.inFlight < capacity else { return .failure(.queueFull(capacity: capacity)) }
            // Never reached by counting; only a tampered spool starts near it. No id beyond it is ever given.
            guard state.queue.nextAnnouncementID < AnnouncementSpool.largestID else {
                return .failure(LineProtocol.Refusal(
                    code: "spool-failed", reason: "no announcement ids are left (the spool's counter was tampered with)"))
            }
            let announcement = Announcement(
                id: state.queue.takeNextID(), text: text, acceptedAt: WallClock.nowMilliseconds(),
                expiresAt: WallClock.bootSeconds() + ttlSeconds)
            state.inFlight += 1
            // Under the lock, so the writer receives them in id order.
            writer?.submit(.store(announcement) { [self] failure in
                guard let failure else { return self.enqueue(announcement, completion: completion) }
                self.state.withLock { $0.inFlight -= 1 }
                completion(.failure(LineProtocol.Refusal(code: "spool-failed", reason: failure.description)))
            })
            return .success(announcement)
        }
        switch accepted {
        case .failure: completion(accepted)
        case .success(let announcement): if writer == nil { enqueue(announcement, completion: completion) }
        }
    }

    /// A stored (or, without a spool, accepted) announcement: its completion runs first, so the client's
    /// `OK` and the log's "accepted" come before anything the speaker does with it; then it joins the queue.
    private func enqueue(
        _ announcement: Announcement, completion: (Result<Announcement, LineProtocol.Refusal>) -> Void
    ) {
        completion(.success(announcement))
        state.withLock { state in
            state.inFlight -= 1
            state.queue.append(announcement)
        }
        wakeSpeaker.signal()
    }

    /// Accepts `text` or says why not, waiting until it is on disk (for callers that can block; never on
    /// the spool writer's thread, from a completion).
    public func submit(_ text: String) -> Result<Announcement, LineProtocol.Refusal> {
        let answered = DispatchSemaphore(value: 0)
        let result = Mutex<Result<Announcement, LineProtocol.Refusal>?>(nil)
        submit(text) { outcome in
            result.withLock { $0 = outcome }
            answered.signal()
        }
        answered.wait()
        return result.withLock { $0! }
    }

    /// Puts a cut announcement back at the front.
    public func requeueFirst(_ announcement: Announcement) {
        state.withLock { $0.queue.requeueFirst(announcement) }
        wakeSpeaker.signal()
    }

    /// Blocks until an announcement is waiting and takes it; nil once closed and empty.
    public func take() -> Announcement? {
        while true {
            let next: Announcement?? = state.withLock { state in
                if let announcement = state.queue.dequeue() { return .some(announcement) }
                return state.closed ? .some(nil) : nil
            }
            if let next { return next }
            wakeSpeaker.wait()
        }
    }

    /// Refuses new announcements from now on; what is queued can still be taken. Submissions already
    /// with the spool writer are stored and answered before this returns, so `drain` sees them (unless
    /// the disk hangs for `closeTimeout` seconds: then this logs it and returns; they are still answered
    /// when the writer gets to them).
    public func close() {
        let pending = state.withLock { state in
            state.closed = true
            return state.inFlight
        }
        if let writer, !writer.flush(timeout: closeTimeout) {
            log("the spool writer did not store \(pending) pending announcement(s) within \(Int(closeTimeout)) s; "
                + "not waiting longer (those it stores before the process exits are still answered)")
        }
        wakeSpeaker.signal()
    }

    /// Whether what waits is safe in the spool for the next start: there is a spool and its writes work.
    public var keepsWhatWaits: Bool { writer.map { !$0.isFailing } ?? false }

    /// Waiting announcements, counting those still being stored.
    public var count: Int { state.withLock { $0.queue.count + $0.inFlight } }

    /// The announcement has been spoken or has expired: it leaves the spool with the writer's next commit.
    /// Does not wait for the disk, so a slow disk never lengthens the gap before the next announcement; a
    /// failure is logged by the writer (the announcement may then be said again after a restart, never
    /// lost). `sync` waits for it.
    public func finished(_ announcement: Announcement) throws(AnnouncementSpool.Failure) {
        writer?.submit(.remove(announcement.id) { _ in })
    }

    /// Waits (at most `closeTimeout`) until everything handed to the spool writer is on disk: the last
    /// removals before the process exits.
    public func sync() {
        if let writer, !writer.flush(timeout: closeTimeout) {
            log("the spool writer did not finish within \(Int(closeTimeout)) s; stopping without waiting for it")
        }
    }

    /// Everything still waiting, oldest first, and empties the board.
    public func drain() -> [Announcement] {
        state.withLock { state in
            var all: [Announcement] = []
            while let next = state.queue.dequeue() { all.append(next) }
            return all
        }
    }
}
