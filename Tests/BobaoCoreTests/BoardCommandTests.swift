import BobaoCore
import BobaoPlatform
import BobaoServer
import Foundation
import Synchronization
import Testing

/// The board's side of issue 9, without a speaker: duplicates by client key (also across a restart),
/// watchers and their events, cancel/skip/clear, cut-in requests, low ones dropped by newer work.
@Suite struct BoardCommandTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-board-\(UUID())").path

    init() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    private func submission(_ text: String, _ priority: Priority = .normal, key: String? = nil) -> Submission {
        var options = MessageOptions()
        options.priority = priority
        options.clientID = key
        return Submission(text: text, options: options)
    }

    /// Events received by watchers, in order.
    final class Events: Sendable {
        let seen = Mutex<[String]>([])
        func watcher(_ label: String) -> AnnouncementBoard.Watcher {
            { event in self.seen.withLock { $0.append("\(label):\(event.name)") } }
        }
        var all: [String] { seen.withLock { $0 } }
    }

    @Test func aRepeatedKeyIsADuplicateAndNotQueuedAgainAlsoAfterARestart() throws {
        let path = folder + "/keys.db"
        do {
            let spool = try AnnouncementSpool(path: path)
            defer { spool.close() }
            let board = try AnnouncementBoard(capacity: 8, spool: spool)
            let first = try board.submit(submission("一号", key: "order-1")).get()
            #expect(first == .init(number: 1, duplicate: false))
            #expect(try board.submit(submission("一号 again", key: "order-1")).get() == .init(number: 1, duplicate: true))
            #expect(board.count == 1)
            let taken = try #require(board.take())
            board.finish(taken, .done)
            board.sync()
        }
        let board = try AnnouncementBoard(capacity: 8, spool: try AnnouncementSpool(path: path))
        #expect(try board.submit(submission("一号 after restart", key: "order-1")).get() == .init(number: 1, duplicate: true))
        #expect(board.count == 0)
        // The outcome came back from the spool too: a watcher of the duplicate hears it at once.
        let events = Events()
        #expect(board.watch(1, clientID: "order-1", events.watcher("1")))
        #expect(events.all == ["1:done"])
        #expect(try board.submit(submission("二号", key: "order-2")).get() == .init(number: 2, duplicate: false))
    }

    @Test func optionsSurviveARestart() throws {
        let path = folder + "/options.db"
        var options = MessageOptions()
        options.priority = .urgent
        options.repeatCount = 3
        options.chime = .named("bell")
        options.voice = "zh"
        options.rate = 200
        options.pitch = 40
        options.volume = 30
        options.clientID = "k"
        options.maximumSpeechSeconds = 2.5
        options.ttlSeconds = 3600
        do {
            let spool = try AnnouncementSpool(path: path)
            defer { spool.close() }
            let board = try AnnouncementBoard(capacity: 8, spool: spool)
            _ = try board.submit(Submission(text: "带选项", options: options)).get()
            _ = try board.submit(submission("普通")).get()
            board.sync()
        }
        // Read back with a --ttl of 5 s: the message's own ttl of an hour still holds.
        let restored = try AnnouncementSpool(path: path).all(ttlSeconds: 5)
        #expect(restored.map(\.options) == [options, MessageOptions()])
        #expect(restored[0].expiresAt - WallClock.bootSeconds() > 3000)
        #expect(restored[1].expiresAt - WallClock.bootSeconds() <= 5)
    }

    @Test func watchersHearStartThenExactlyOneOutcome() throws {
        let board = try AnnouncementBoard(capacity: 8)
        let events = Events()
        let number = try board.submit(submission("看着")).get().number
        #expect(board.watch(number, events.watcher("a")))
        let taken = try #require(board.take())
        board.started(taken)
        board.finish(taken, .done)
        board.finish(taken, .done)  // a second finish reaches no watcher
        #expect(events.all == ["a:start", "a:done"])
        #expect(!board.watch(number, events.watcher("late")), "nothing to watch once it has ended without a key")
        #expect(board.snapshot.counters["done"] == 2)
    }

    @Test func cancelRemovesByKeyOrNumberAndSaysWhenNothingMatches() throws {
        let board = try AnnouncementBoard(capacity: 8)
        let events = Events()
        let a = try board.submit(submission("甲", key: "A")).get().number
        let b = try board.submit(submission("乙")).get().number
        _ = board.watch(a, events.watcher("A"))
        #expect(try board.cancel(.id("A")).get() == "OK cancelled #\(a)\n")
        #expect(try board.cancel(.id(String(b))).get() == "OK cancelled #\(b)\n")
        guard case .failure(let refusal) = board.cancel(.id("nope")) else { Issue.record("found nothing to cancel"); return }
        #expect(refusal.code == "not-found")
        #expect(refusal.reason.contains("\"nope\""))
        #expect(events.all == ["A:cancelled"])
        #expect(board.count == 0)
    }

    @Test func skipAndCancelAskTheSpeakerToStopTheOneSpeaking() throws {
        let board = try AnnouncementBoard(capacity: 8)
        let asked = Mutex<[String]>([])
        board.setInterrupter { number, why in asked.withLock { $0.append("\(number) \(why)") } }
        #expect(board.skip() == "OK nothing is speaking\n")
        let number = try board.submit(submission("长的", key: "long")).get().number
        _ = try #require(board.take())
        #expect(board.skip() == "OK skipped #\(number)\n")
        #expect(try board.cancel(.id("long")).get().hasPrefix("OK"), "it was still speaking when asked again")
        #expect(asked.withLock { $0 }.count == 2)
        #expect(asked.withLock { $0 }.first?.hasPrefix("\(number) cancelled") == true)
    }

    @Test func clearCancelsEverythingWaitingButNotTheOneSpeaking() throws {
        let board = try AnnouncementBoard(capacity: 8)
        let events = Events()
        for text in ["一", "二", "三"] { _ = try board.submit(submission(text)).get() }
        let speaking = try #require(board.take())
        _ = board.watch(speaking.id, events.watcher("speaking"))
        _ = board.watch(2, events.watcher("2"))
        #expect(board.clear() == "OK cleared 2\n")
        #expect(events.all == ["2:cancelled"])
        #expect(board.snapshot.speaking?.id == speaking.id)
    }

    @Test func anUrgentOneAsksToCutInOnceAndNeverCutsAnotherUrgentOne() throws {
        let board = try AnnouncementBoard(capacity: 8)
        let asked = Mutex<[UInt64]>([])
        board.setInterrupter { number, why in
            #expect(why == .cutIn)
            asked.withLock { $0.append(number) }
        }
        let normal = try board.submit(submission("普通")).get().number
        _ = try #require(board.take())
        _ = try board.submit(submission("急一", .urgent)).get()
        _ = try board.submit(submission("急二", .urgent)).get()
        #expect(asked.withLock { $0 } == [normal], "asked once for the normal one")
        let first = try #require(board.take())
        #expect(first.text == "急一")
        _ = try board.submit(submission("急三", .urgent)).get()
        #expect(asked.withLock { $0 } == [normal], "an urgent one is never cut by another")
    }

    @Test func aCancelledOneIsNotRequeuedWhateverCutIt() throws {
        let board = try AnnouncementBoard(capacity: 8)
        board.setInterrupter { _, _ in }
        let events = Events()
        let number = try board.submit(submission("长的", key: "long")).get().number
        _ = board.watch(number, events.watcher("long"))
        let taken = try #require(board.take())
        _ = try board.submit(submission("急", .urgent)).get()  // asks to cut in…
        #expect(try board.cancel(.id("long")).get() == "OK cancelled #\(number)\n")  // …and a client cancels it
        #expect(!board.requeueFirst(taken, interrupted: true), "the speaker's cut-in requeue loses to the cancel")
        #expect(events.all == ["long:cancelled"])
        #expect(board.snapshot.waiting[.normal] == 0)
        #expect(board.take()?.text == "急")
    }

    @Test func aQueueFullOfLowOnesStillTakesANormalOneWhichDropsThem() throws {
        let board = try AnnouncementBoard(capacity: 3)
        for index in 0..<3 { _ = try board.submit(submission("低\(index)", .low)).get() }
        guard case .failure(let refusal) = board.submit(submission("又一个低的", .low)) else {
            Issue.record("a fourth low one was accepted into a queue of 3")
            return
        }
        #expect(refusal.code == "queue-full")
        #expect(try board.submit(submission("正常")).get().number == 4)
        #expect(board.count == 1)
    }

    @Test func aDuplicateOfOneStillBeingStoredGetsItsAnswerOnceItIsStored() throws {
        let spool = try AnnouncementSpool(path: folder + "/inflight.db")
        defer { spool.close() }
        let board = try AnnouncementBoard(capacity: 8, spool: spool)
        let answers = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        for text in ["第一", "第二"] {
            board.submit(submission(text, key: "same")) { result in
                answers.withLock { $0.append((try? result.get()).map { "\($0.number)\($0.duplicate ? " duplicate" : "")" } ?? "refused") }
                done.signal()
            }
        }
        for _ in 0..<2 { #expect(done.wait(timeout: .now() + 10) == .success) }
        #expect(answers.withLock { $0 } == ["1", "1 duplicate"], "the duplicate is answered after its first, never before")
        #expect(board.count == 1)
    }

    @Test func aCommandRunsAfterTheSubmissionsMadeBeforeIt() throws {
        let spool = try AnnouncementSpool(path: folder + "/order.db")
        defer { spool.close() }
        let board = try AnnouncementBoard(capacity: 8, spool: spool)
        board.submit(submission("第一", key: "k")) { _ in }
        board.submit(submission("第二")) { _ in }
        let reply = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        board.afterPendingSubmissions {
            reply.withLock { $0 = board.clear() }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(reply.withLock { $0 } == "OK cleared 2\n")
    }

    @Test func aLowOneIsDroppedWithItsOutcomeWhenNewerWorkArrives() throws {
        let board = try AnnouncementBoard(capacity: 8)
        let events = Events()
        let low = try board.submit(submission("不急", .low)).get().number
        _ = board.watch(low, events.watcher("low"))
        _ = try board.submit(submission("正常")).get()
        #expect(events.all == ["low:cancelled"])
        #expect(board.snapshot.waiting[.low] == 0)
        #expect(board.snapshot.waiting[.normal] == 1)
    }
}
