import BobaoCore
import BobaoPlatform
import Dispatch
import Glibc
import Synchronization

/// The announcement queue shared by the listener (which adds) and the speaker (which takes): a lock
/// around `AnnouncementQueue` and a condition the speaker waits on.
public final class AnnouncementBoard: Sendable {
    private let state: Mutex<State>
    private let wakeSpeaker = DispatchSemaphore(value: 0)

    private struct State {
        var queue: AnnouncementQueue
        var closed = false
    }

    /// Where accepted announcements are kept until spoken; nil keeps them in memory only.
    public let spool: AnnouncementSpool?

    /// - Parameter spool: announcements it holds are queued first, in their order.
    /// How long an accepted announcement may wait for its turn.
    public let ttlSeconds: Double

    public init(capacity: Int, ttlSeconds: Double = 120, spool: AnnouncementSpool? = nil) throws(AnnouncementSpool.Failure) {
        self.ttlSeconds = ttlSeconds
        var queue = AnnouncementQueue(capacity: capacity)
        if let spool { queue.restore(try spool.all()) }
        state = Mutex(State(queue: queue))
        self.spool = spool
        for _ in 0..<queue.count { wakeSpeaker.signal() }
    }

    /// Accepts `text` or says why not. `completion` runs exactly once: at once without a spool, or on the
    /// spool writer's thread once the announcement is on disk. It must be quick and must not call back
    /// into the board.
    public func submit(
        _ text: String, completion: @escaping @Sendable (Result<Announcement, LineProtocol.Refusal>) -> Void
    ) {
        completion(submit(text))
    }

    /// Accepts `text` or says why not.
    public func submit(_ text: String) -> Result<Announcement, LineProtocol.Refusal> {
        let spool = self.spool
        let result = state.withLock { state -> Result<Announcement, LineProtocol.Refusal> in
            guard !state.closed else { return .failure(.shuttingDown) }
            let now = WallClock.nowMilliseconds()
            if state.queue.count < state.queue.capacity, let spool {
                // On disk before OK: the id it will get, stored first, then queued.
                let announcement = Announcement(
                    id: state.queue.nextAnnouncementID, text: text, acceptedAt: now,
                    expiresAt: WallClock.bootSeconds() + ttlSeconds)
                do { try spool.store(announcement) } catch {
                    return .failure(LineProtocol.Refusal(code: "spool-failed", reason: "could not store the announcement"))
                }
            }
            return Self.enqueue(text, at: now, expiresAt: WallClock.bootSeconds() + ttlSeconds, into: &state.queue)
        }
        if case .success = result { wakeSpeaker.signal() }
        return result
    }

    private static func enqueue(
        _ text: String, at now: Int64, expiresAt: Double, into queue: inout AnnouncementQueue
    ) -> Result<Announcement, LineProtocol.Refusal> {
        do {
            return .success(try queue.enqueue(text, at: now, expiresAt: expiresAt))
        } catch {
            switch error {
            case .full(let capacity): return .failure(.queueFull(capacity: capacity))
            }
        }
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

    /// Refuses new announcements from now on; what is queued can still be taken.
    public func close() {
        state.withLock { $0.closed = true }
        wakeSpeaker.signal()
    }

    public var count: Int { state.withLock { $0.queue.count } }

    /// The announcement has been spoken or has expired: it leaves the spool.
    public func finished(_ announcement: Announcement) throws(AnnouncementSpool.Failure) {
        guard let spool else { return }
        try state.withLock { _ throws(AnnouncementSpool.Failure) in try spool.remove(id: announcement.id) }
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
