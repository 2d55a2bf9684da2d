import BobaoCore
import BobaoPlatform
import BobaoServer
import CSQLite
import Foundation
import Synchronization
import Testing

/// The spool and its writer, in process: group commit from several threads, capacity, close, ids across
/// restarts, an old-format spool, the TTL restore rule.
@Suite struct SpoolGroupCommitTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-group-\(UUID())").path

    init() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    @Test func submissionsFromSeveralThreadsShareCommitsAndKeepTheirOrder() throws {
        let spool = try AnnouncementSpool(path: folder + "/spool.db")
        let board = try AnnouncementBoard(capacity: 1000, ttlSeconds: 60, spool: spool)
        let threads = 8, perThread = 50, total = threads * perThread
        let answered = Mutex<[UInt64]>([])
        let refused = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for line in 0..<perThread {
                board.submit(Submission(text: "线程\(thread)第\(line)条")) { result in
                    switch result {
                    case .success(let announcement): answered.withLock { $0.append(announcement.number) }
                    case .failure: refused.add(1, ordering: .relaxed)
                    }
                    done.signal()
                }
            }
        }
        for _ in 0..<total { #expect(done.wait(timeout: .now() + 30) == .success) }
        let ids = answered.withLock { $0 }
        #expect(refused.load(ordering: .relaxed) == 0)
        #expect(ids == Array(1...UInt64(total)), "answered in id order, every id once")
        #expect(spool.commitCount < total, "group commit: \(spool.commitCount) commits for \(total) submissions")
        #expect(spool.commitCount >= 1)
        print("group commit: \(spool.commitCount) commits for \(total) submissions")
        // The speaker takes them in id order.
        var taken: [UInt64] = []
        for _ in 0..<total { taken.append(board.take()!.id) }
        #expect(taken == ids)
        // Removals go through the writer too, without waiting; on disk after `sync`.
        for id in taken.prefix(10) { board.finished(Announcement(id: id, text: "x")) }
        board.sync()
        #expect(try spool.all().count == total - 10)
        board.close()
        spool.close()
        let reopened = try AnnouncementSpool(path: folder + "/spool.db")
        #expect(reopened.lastID == UInt64(total))
        #expect(try reopened.all().map(\.id) == Array(11...UInt64(total)))
        reopened.close()
    }

    @Test func capacityCountsSubmissionsStillBeingWritten() throws {
        let spool = try AnnouncementSpool(path: folder + "/capacity.db")
        let board = try AnnouncementBoard(capacity: 5, ttlSeconds: 60, spool: spool)
        let results = Mutex<[Result<AnnouncementBoard.Acceptance, LineProtocol.Refusal>]>([])
        let done = DispatchSemaphore(value: 0)
        for index in 0..<8 {
            board.submit(Submission(text: "第\(index)条")) { result in
                results.withLock { $0.append(result) }
                done.signal()
            }
        }
        for _ in 0..<8 { #expect(done.wait(timeout: .now() + 30) == .success) }
        let all = results.withLock { $0 }
        #expect(all.filter { if case .success = $0 { true } else { false } }.count == 5)
        #expect(all.filter { if case .failure(let refusal) = $0 { refusal.code == "queue-full" } else { false } }.count == 3)
        #expect(board.count == 5)
        // Closing answers everything pending; later submissions are refused, but still answered.
        board.close()
        #expect(board.submit("晚了") == .failure(.shuttingDown))
        #expect(board.drain().map(\.id) == [1, 2, 3, 4, 5])
        spool.close()
    }

    @Test func closeAnswersEverySubmissionStillBeingWritten() throws {
        let spool = try AnnouncementSpool(path: folder + "/close.db")
        let board = try AnnouncementBoard(capacity: 500, ttlSeconds: 60, spool: spool)
        let answered = Atomic<Int>(0)
        for index in 0..<200 {
            board.submit(Submission(text: "第\(index)条")) { _ in answered.add(1, ordering: .relaxed) }
        }
        board.close()
        #expect(answered.load(ordering: .relaxed) == 200, "every completion ran before close returned")
        #expect(board.drain().map(\.id) == Array(1...200))
        board.submit(Submission(text: "晚了")) { result in
            #expect(result == .failure(.shuttingDown))
            answered.add(1, ordering: .relaxed)
        }
        #expect(answered.load(ordering: .relaxed) == 201)
        // Removals still work after close (the speaker finishes the announcement being spoken).
        board.finished(Announcement(id: 1, text: "第0条"))
        board.sync()
        #expect(try spool.all().count == 199)
        spool.close()
    }

    @Test func idsNeverRepeatAcrossRestartsEvenWithAnEmptySpool() throws {
        let path = folder + "/ids.db"
        do {
            let spool = try AnnouncementSpool(path: path)
            let board = try AnnouncementBoard(capacity: 10, spool: spool)
            #expect(try board.submit("一").get().id == 1)
            #expect(try board.submit("二").get().id == 2)
            board.finished(board.take()!)
            board.finished(board.take()!)
            board.close()
            board.sync()
            spool.close()
        }
        let spool = try AnnouncementSpool(path: path)
        let board = try AnnouncementBoard(capacity: 10, spool: spool)
        #expect(board.count == 0)
        #expect(try board.submit("三").get().id == 3)
        board.close()
        spool.close()
    }

    @Test func aSpoolFromBeforeTheCounterIsTakenOver() throws {
        let path = folder + "/old.db"
        var handle: OpaquePointer?
        #expect(sqlite3_open(path, &handle) == SQLITE_OK)
        #expect(sqlite3_exec(handle, """
            PRAGMA journal_mode=WAL;
            CREATE TABLE announcements (id INTEGER PRIMARY KEY, text TEXT NOT NULL, accepted_at INTEGER NOT NULL);
            INSERT INTO announcements VALUES (7, '七号', 1764000000000), (9, '九号', 1764000001000);
            """, nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)
        let spool = try AnnouncementSpool(path: path)
        #expect(spool.lastID == 9)
        #expect(FileManager.default.fileExists(atPath: path + "-hwm"))
        let board = try AnnouncementBoard(capacity: 10, ttlSeconds: 60, spool: spool)
        let restored = board.drain()
        #expect(restored.map(\.id) == [7, 9])
        // Rows saved without a remainder get the whole TTL from now.
        #expect(restored.allSatisfy { abs($0.expiresAt - (WallClock.bootSeconds() + 60)) < 5 })
        #expect(try board.submit("十号").get().id == 10)
        board.close()
        spool.close()
        // Reopened, it is an ordinary spool now: the counter is required from here on.
        try FileManager.default.removeItem(atPath: path + "-hwm")
        #expect(throws: AnnouncementSpool.Failure.self) { try AnnouncementSpool(path: path) }
    }

    /// Same boot: the stored remainder minus the boot clock since the save. Another boot: the stored
    /// remainder, whole. Never more than the current TTL.
    @Test func restoredTimeToLiveFollowsTheBootRule() throws {
        let path = folder + "/ttl.db"
        do {
            let spool = try AnnouncementSpool(path: path)
            let now = WallClock.bootSeconds()
            _ = try spool.commit(storing: [
                Announcement(id: 1, text: "一号", acceptedAt: 1, expiresAt: now + 50),
                Announcement(id: 2, text: "二号", acceptedAt: 1, expiresAt: now + 50),
                Announcement(id: 3, text: "三号", acceptedAt: 1, expiresAt: now + 500),
            ], removing: [])
            spool.close()
        }
        let since = min(30, WallClock.bootSeconds() / 2)  // a box booted moments ago has less boot clock behind it
        let savedMilliseconds = Int64((WallClock.bootSeconds() - since) * 1000)
        var handle: OpaquePointer?
        #expect(sqlite3_open(path, &handle) == SQLITE_OK)
        #expect(sqlite3_exec(handle, """
            UPDATE announcements SET saved_boot_ms = \(savedMilliseconds) WHERE id = 1;
            UPDATE announcements SET boot_id = 'another-boot', saved_boot_ms = 0 WHERE id = 2;
            """, nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)
        let spool = try AnnouncementSpool(path: path)
        let left = try spool.all(ttlSeconds: 100).map { $0.expiresAt - WallClock.bootSeconds() }
        #expect(abs(left[0] - (50 - since)) < 2, "same boot: 50 s left at the save, minus the boot clock since: \(left[0])")
        #expect(abs(left[1] - 50) < 2, "another boot: the 50 s left at the save: \(left[1])")
        #expect(abs(left[2] - 100) < 2, "capped at the current TTL: \(left[2])")
        spool.close()
    }

    @Test func withoutASpoolTheCompletionRunsAtOnce() throws {
        let board = try AnnouncementBoard(capacity: 2)
        let answered = Mutex<UInt64?>(nil)
        board.submit(Submission(text: "好")) { result in answered.withLock { $0 = try? result.get().number } }
        #expect(answered.withLock { $0 } == 1)
    }
}
