import BobaoCore
import BobaoPlatform
import BobaoServer
import Dispatch
import Foundation
import Synchronization
import Testing

/// The activity feed behind `GET /announcements` and `GET /events`, fed by a real board and a real speaker on
/// the fakes: the events' order and contents, the last 50 kept, JSON escaping, and coalesced status events.
@Suite(.timeLimit(.minutes(1)))
struct ActivityFeedTests {
    @Test func anAnnouncementIsAcceptedStartedAndDoneWithItsOnsetAndSpeakingTime() throws {
        let rig = try ActivityRig()
        let before = WallClock.nowMilliseconds()
        let number = rig.submit("一号请取餐", id: "order-7")
        let after = WallClock.nowMilliseconds()
        rig.speaker.start()
        let done = try #require(rig.recorder.waitFor("done", number))
        #expect(rig.recorder.names(of: number) == ["accepted", "start", "done"])
        let sequences = rig.recorder.all.map(\.sequence)
        #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count, "increasing")

        let accepted = ActivityRecorder.object(rig.recorder.all.first { $0.name == "accepted" }!.data)
        #expect(accepted["number"] as? UInt64 == number && accepted["id"] as? String == "order-7")
        #expect(accepted["text"] as? String == "一号请取餐" && accepted["priority"] as? String == "normal")
        let acceptedAt = try #require(accepted["accepted_at_ms"] as? Int64)
        #expect(acceptedAt >= before && acceptedAt <= after)

        let fields = ActivityRecorder.object(done.data)
        #expect(fields["reason"] is NSNull)
        let onset = try #require(fields["onset_ms"] as? Double), speaking = try #require(fields["speaking_ms"] as? Double)
        #expect(onset >= 0 && onset < 5000 && speaking >= 0 && speaking < 5000)
        #expect(done.data.hasPrefix("{\"number\":\(number),\"id\":\"order-7\",\"reason\":null,\"onset_ms\":"))

        let entry = try #require(rig.recent.first)
        #expect(entry["state"] as? String == "done" && entry["onset_ms"] as? Double == onset)
        #expect(entry["speaking_ms"] as? Double == speaking && entry["accepted_at_ms"] as? Int64 == acceptedAt)
        #expect(rig.finish())
    }

    /// A rig whose synthesizer stops in the middle of `SpeakerTests.tenCharacters` until released.
    static func pausingRig() throws -> (ActivityRig, reached: DispatchSemaphore, release: DispatchSemaphore) {
        let reached = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let synthesizer = SpeakerTests.pausing(at: SpeakerTests.tenCharacters, reached: reached, release: release)
        return (try ActivityRig(synthesizer: synthesizer), reached, release)
    }

    @Test func aWaitingAnnouncementCancelledByAClientEndsCancelled() throws {
        let (rig, reached, release) = try Self.pausingRig()
        let first = rig.submit(SpeakerTests.tenCharacters)
        let second = rig.submit("二号请取餐", id: "b")
        rig.speaker.start()
        #expect(reached.wait(timeout: .now() + 10) == .success)
        #expect(try rig.board.cancel(.id("b")).get() == "OK cancelled #\(second)\n")
        let cancelled = try #require(rig.recorder.waitFor("cancelled", second))
        #expect(ActivityRecorder.object(cancelled.data)["reason"] as? String == "cancelled by a client")
        #expect(cancelled.data.hasSuffix("\"onset_ms\":null,\"speaking_ms\":null}"), "never started")
        release.signal()
        #expect(rig.recorder.waitFor("done", first) != nil)
        #expect(rig.recorder.names(of: second) == ["accepted", "cancelled"])
        #expect(rig.recent.map { $0["state"] as? String } == ["cancelled", "done"])
        #expect(rig.finish())
    }

    @Test func anAnnouncementWhoseTTLRanOutEndsExpiredEvenIfRestoredRatherThanAccepted() throws {
        let rig = try ActivityRig()
        let stale = Announcement(id: 100, text: "早就过期", acceptedAt: 1_700_000_000_000, expiresAt: WallClock.bootSeconds() - 5)
        rig.board.requeueFirst(stale)
        #expect(rig.recent.first?["state"] as? String == "waiting", "listed once the board has it")
        rig.speaker.start()
        #expect(rig.recorder.waitFor("expired", 100) != nil)
        #expect(rig.recorder.names(of: 100) == ["expired"])
        let entry = try #require(rig.recent.first)
        #expect(entry["number"] as? UInt64 == 100 && entry["state"] as? String == "expired")
        #expect(entry["accepted_at_ms"] as? Int64 == 1_700_000_000_000 && entry["onset_ms"] is NSNull)
        #expect(rig.finish())
    }

    @Test func anUrgentAnnouncementInterruptsTheOneSpeakingWhichIsSaidAgainAfterIt() throws {
        let (rig, reached, release) = try Self.pausingRig()
        let normal = rig.submit(SpeakerTests.tenCharacters)
        rig.speaker.start()
        #expect(reached.wait(timeout: .now() + 10) == .success)
        let urgent = rig.submit("紧急通知", priority: .urgent)
        release.signal()
        release.signal()  // the second time it is said
        #expect(rig.recorder.waitFor("done", normal) != nil)
        let order = rig.recorder.all.filter { $0.name != "status" }.map {
            "\($0.name)#\(ActivityRecorder.object($0.data)["number"] as? UInt64 ?? 0)"
        }
        #expect(order == [
            "accepted#\(normal)", "start#\(normal)", "accepted#\(urgent)", "interrupted#\(normal)",
            "start#\(urgent)", "done#\(urgent)", "start#\(normal)", "done#\(normal)",
        ])
        let interrupted = try #require(rig.recorder.waitFor("interrupted", normal))
        #expect(ActivityRecorder.object(interrupted.data)["reason"] as? String
            == "an urgent announcement cut in; it will be said again from its start")
        #expect(rig.recent.map { $0["number"] as? UInt64 } == [urgent, normal])
        #expect(rig.recent.allSatisfy { $0["state"] as? String == "done" && $0["reason"] is NSNull })
        #expect(rig.finish())
    }

    @Test func theLast50AreKeptNewestFirst() throws {
        let rig = try ActivityRig(capacity: 64)
        for index in 1...60 { rig.submit("第\(index)号") }
        let numbers = rig.recent.map { $0["number"] as? UInt64 }
        #expect(numbers == (11...60).reversed().map { UInt64($0) })
        #expect(rig.recent.first?["text"] as? String == "第60号")
        #expect(rig.recent.allSatisfy { $0["state"] as? String == "waiting" && $0["speaking_ms"] is NSNull })
        #expect(rig.recorder.all.filter { $0.name == "accepted" }.count == 60, "every event, whatever is kept")
        rig.board.close()
        rig.activity.stop()
    }

    @Test func chineseTextAndQuotesAreEscapedToPrintableASCII() throws {
        let rig = try ActivityRig()
        let text = "请到\"三号\"窗口\\取餐\n谢谢"
        rig.submit(text, id: "订单7")
        let json = rig.activity.recentJSON()
        #expect(json.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }, "printable ASCII only: \(json)")
        #expect(json.contains(#""text":"\u8bf7\u5230\"\u4e09\u53f7\"\u7a97\u53e3\\\u53d6\u9910\n\u8c22\u8c22""#))
        #expect(json.contains(#""id":"\u8ba2\u53557""#))
        #expect(rig.recent.first?["text"] as? String == text && rig.recent.first?["id"] as? String == "订单7")
        let accepted = try #require(rig.recorder.all.first { $0.name == "accepted" })
        #expect(ActivityRecorder.object(accepted.data)["text"] as? String == text)
        #expect(!accepted.data.contains("\n"), "one line, as an SSE data field must be")
        rig.board.close()
        rig.activity.stop()
    }

    @Test func anEventRendersAsAServerSentEvent() {
        let event = ActivityEvent(sequence: 7, name: "start", data: #"{"number":3}"#)
        #expect(event.serverSentEvent == "id: 7\nevent: start\ndata: {\"number\":3}\n\n")
    }

    @Test func statusEventsFollowTheBoardAndAreCoalesced() throws {
        let rig = try ActivityRig(statusInterval: 0.2)
        let version = Mutex(0)
        let board = rig.board
        rig.activity.setStatusSource { "{\"version\":\(version.withLock { $0 }),\"total\":\(board.count)}\n" }
        let recorder = ActivityRecorder()
        let id = rig.activity.subscribe(recorder.handler)
        #expect(recorder.all.first?.name == "status" && recorder.all.first?.data == #"{"version":0,"total":0}"#,
                "first on subscribing, without its newline")
        rig.submit("一号请取餐")  // the board's change reaches the feed
        #expect(recorder.waitFor { $0.data == #"{"version":0,"total":1}"# } != nil)
        for _ in 1...50 {
            version.withLock { $0 += 1 }
            rig.activity.statusMayHaveChanged()
        }
        #expect(recorder.waitFor { $0.data == #"{"version":50,"total":1}"# } != nil, "the last state arrives")
        let sent = recorder.arrivals.filter { $0.event.name == "status" }.dropFirst()  // after the subscriber's own
        #expect(sent.count <= 4, "coalesced: \(sent.map(\.event.data))")
        for (earlier, later) in zip(sent, sent.dropFirst()) {
            #expect(later.at - earlier.at >= 0.15, "at most one every interval")
        }
        rig.activity.unsubscribe(id)
        rig.board.close()
        rig.activity.stop()
    }
}
