import BobaoCore
import BobaoPlatform
import Dispatch
import Synchronization

/// The one thread that writes the spool, with group commit: every store and removal waiting when a commit
/// starts goes into that one transaction (one fsync of the WAL, one of the high-water mark), and their
/// completions run, in submission order, once it is on disk. When it has been idle for a moment it
/// checkpoints the WAL into the database.
///
/// A failed commit refuses everything in it with `ERR spool-failed`; the first failure is logged loudly,
/// later ones are counted and summed up (when writes work again, or once a minute), never logged one by one.
final class SpoolWriter: Sendable {
    enum Work {
        case store(Announcement, @Sendable (AnnouncementSpool.Failure?) -> Void)
        /// Removes a spoken (or otherwise ended) announcement; `settling` records the outcome of its client key.
        case remove(UInt64, settling: (key: String, outcome: String)?, @Sendable (AnnouncementSpool.Failure?) -> Void)
        case barrier(DispatchSemaphore)
        /// Runs once everything submitted before it is committed and answered (on the writer's thread).
        case after(@Sendable () -> Void)
    }

    private struct Faults {
        var failing = false
        var refusedSinceReport = 0
        var lastReport = 0.0
    }

    private let spool: AnnouncementSpool
    private let pending = Mutex<[Work]>([])
    private let wake = DispatchSemaphore(value: 0)
    private let faults = Mutex(Faults())
    private let log: @Sendable (String) -> Void
    private let idleCheckpointSeconds: Double

    init(spool: AnnouncementSpool, idleCheckpointSeconds: Double = 2, log: @escaping @Sendable (String) -> Void) {
        self.spool = spool
        self.log = log
        self.idleCheckpointSeconds = idleCheckpointSeconds
        startThread(name: "bobao.spool") { [self] in run() }
    }

    /// The last commit failed (the spool was deleted, the disk is full…).
    var isFailing: Bool { faults.withLock { $0.failing } }

    /// Queues work for the next commit. Callers that need an order among their submissions must serialize
    /// their calls (the board submits under its lock).
    func submit(_ work: Work) {
        pending.withLock { $0.append(work) }
        wake.signal()
    }

    /// Returns once everything submitted before the call has been committed (or refused) and answered;
    /// false if that took longer than `timeout` seconds (a hung disk).
    func flush(timeout: Double = .infinity) -> Bool {
        let done = DispatchSemaphore(value: 0)
        submit(.barrier(done))
        guard timeout.isFinite else {
            done.wait()
            return true
        }
        return done.wait(timeout: .now() + timeout) == .success
    }

    private func run() {
        var dirty = false
        while true {
            let batch = pending.withLock { work -> [Work] in
                defer { work.removeAll(keepingCapacity: true) }
                return work
            }
            if batch.isEmpty {
                if dirty {
                    if wake.wait(timeout: .now() + idleCheckpointSeconds) == .timedOut {
                        do { try spool.checkpoint() } catch { log(LogPriority.error + "spool checkpoint failed: \(error.description)") }
                        dirty = false
                    }
                } else {
                    wake.wait()
                }
                continue
            }
            if commit(batch) { dirty = true }
        }
    }

    /// Commits one group and answers it; returns whether anything was written.
    private func commit(_ batch: [Work]) -> Bool {
        var stores: [Announcement] = []
        var removals: [UInt64] = []
        var settled: [(key: String, number: UInt64, outcome: String)] = []
        for work in batch {
            switch work {
            case .store(let announcement, _): stores.append(announcement)
            case .remove(let id, let settling, _):
                removals.append(id)
                if let settling { settled.append((settling.key, id, settling.outcome)) }
            case .barrier, .after: break
            }
        }
        var failure: AnnouncementSpool.Failure? = nil
        if !stores.isEmpty || !removals.isEmpty {
            do {
                if let warning = try spool.commit(storing: stores, removing: removals, settling: settled) { log(LogPriority.warning + "SPOOL WARNING: \(warning)") }
            } catch {
                failure = error
            }
            report(failure, refused: stores.count)
        }
        for work in batch {
            switch work {
            case .store(_, let completion), .remove(_, _, let completion): completion(failure)
            case .barrier(let done): done.signal()
            case .after(let body): body()
            }
        }
        return failure == nil && (!stores.isEmpty || !removals.isEmpty)
    }

    private func report(_ failure: AnnouncementSpool.Failure?, refused: Int) {
        let now = WallClock.monotonicSeconds()
        let message: String? = faults.withLock { faults in
            if let failure {
                if !faults.failing {
                    faults.failing = true
                    faults.lastReport = now
                    return "SPOOL FAILED: \(failure.description). Lines are refused with ERR spool-failed until "
                        + "this is fixed; further refusals are counted, not logged one by one"
                }
                faults.refusedSinceReport += refused
                guard now - faults.lastReport >= 60 else { return nil }
                defer { faults.refusedSinceReport = 0; faults.lastReport = now }
                return "SPOOL STILL FAILING: \(faults.refusedSinceReport) more line(s) refused with spool-failed in the "
                    + "last \(Int(now - faults.lastReport)) s: \(failure.description)"
            }
            guard faults.failing else { return nil }
            defer { faults = Faults() }
            return "spool writes work again (\(spool.path)); \(faults.refusedSinceReport) more line(s) were refused "
                + "with spool-failed meanwhile"
        }
        if let message { log(message) }
    }
}
