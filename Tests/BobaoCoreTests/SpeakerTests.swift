import BobaoCore
import BobaoPlatform
import BobaoServer
import Dispatch
import Foundation
import Testing

/// The speaker against a fake synthesizer and a fake output: order, expiry, cuts, shutdown and
/// `--max-speech`, in milliseconds and without PulseAudio. The fake synthesizer makes 100 samples per
/// character at 1000 Hz, so a ten-character text is one second, 1000 samples.
@Suite(.timeLimit(.minutes(1)))
struct SpeakerTests {
    typealias Record = FakeAudioOutput.Record

    /// A board, a speaker, its fakes and its log.
    struct Rig {
        let board: AnnouncementBoard
        let synthesizer: FakeSynthesizer
        let output = FakeAudioOutput()
        let log = RecordedLog()
        let speaker: Speaker

        init(
            maximumSpeechSeconds: Double = 60, spool: AnnouncementSpool? = nil,
            synthesizer: FakeSynthesizer = FakeSynthesizer(),
            chime: @escaping @Sendable (ChimeChoice) -> [Int16]? = { _ in nil }
        ) throws {
            board = try AnnouncementBoard(capacity: 16, ttlSeconds: 120, spool: spool)
            self.synthesizer = synthesizer
            speaker = Speaker(
                board: board, synthesizer: synthesizer, output: output, parameters: SpeechParameters(),
                maximumSpeechSeconds: maximumSpeechSeconds, chime: chime, log: log.eventLog)
        }

        func submit(_ texts: String...) {
            for text in texts {
                guard case .success = board.submit(text) else { Issue.record("\(text) refused"); return }
            }
        }

        /// Closes the board and waits for the speaker to stop.
        func finish() -> Bool {
            board.close()
            return speaker.waitUntilFinished(timeout: 10)
        }
    }

    static let tenCharacters = "请保管好您的随身物品"

    static func temporarySpool() throws -> AnnouncementSpool {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("speaker-\(UUID()).db").path
        return try AnnouncementSpool(path: path)
    }

    @Test func speaksInTheOrderAccepted() throws {
        let rig = try Rig()
        rig.submit("一号请取餐", "二号请取餐", "欢迎光临")
        rig.speaker.start()
        #expect(rig.log.waitFor("spoke #3"))
        #expect(rig.synthesizer.synthesized == ["一号请取餐", "二号请取餐", "欢迎光临"])
        #expect(rig.output.utterances == [500, 500, 400].map { Record(samples: $0, ended: true) })
        let order = ["speaking #1 ", "speaking #2 ", "speaking #3 "].compactMap(rig.log.lineNumber)
        #expect(order.count == 3 && order == order.sorted())
        #expect(rig.finish())
    }

    @Test func anAnnouncementWhoseTTLRanOutIsDroppedAndTheNextSpoken() throws {
        let spool = try Self.temporarySpool()
        let rig = try Rig(spool: spool)
        rig.submit("新客户来了")
        // Accepted long ago: its TTL ran out 5 s before its turn (on the boot clock, as the board sets it).
        let stale = Announcement(id: 100, text: "早就过期", expiresAt: WallClock.bootSeconds() - 5)
        try spool.store(stale)
        rig.board.requeueFirst(stale)
        rig.speaker.start()
        #expect(rig.log.waitFor("spoke #1"))
        #expect(rig.log.text.contains("expired #100 \"早就过期\": its turn came 5."))
        #expect(rig.log.text.contains("after the 120 s limit (--ttl); not spoken"))
        #expect(rig.synthesizer.synthesized == ["新客户来了"], "never spoken late")
        rig.board.sync()
        #expect(try spool.all().isEmpty, "an expired announcement leaves the spool")
        #expect(rig.finish())
    }

    @Test func anUtteranceCutByTheOutputIsSaidAgainFromItsStart() throws {
        let rig = try Rig()
        rig.output.loseStream(afterSamples: 300)
        rig.submit(Self.tenCharacters, "欢迎光临")
        rig.speaker.start()
        #expect(rig.log.waitFor("spoke #2"))
        #expect(rig.log.text.contains("#1 was cut by a sound-server failure; it will be said again from its start"))
        #expect(rig.synthesizer.synthesized == [Self.tenCharacters, Self.tenCharacters, "欢迎光临"])
        #expect(rig.output.utterances == [
            Record(samples: 300, ended: false), Record(samples: 1000, ended: true), Record(samples: 400, ended: true),
        ], "the second time from its start, in full")
        #expect(rig.finish())
    }

    /// A fake synthesizer that stops in the middle of `text` (at its fifth piece) until released.
    static func pausing(at text: String, reached: DispatchSemaphore, release: DispatchSemaphore) -> FakeSynthesizer {
        FakeSynthesizer { spoken, piece in
            if spoken == text && piece == 4 {
                reached.signal()
                release.wait()
            }
        }
    }

    @Test func closingTheBoardLetsTheCurrentAnnouncementFinishThenTheSpeakerStops() throws {
        let reached = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let rig = try Rig(synthesizer: Self.pausing(at: Self.tenCharacters, reached: reached, release: release))
        rig.submit(Self.tenCharacters, "一号", "二号")
        rig.speaker.start()
        #expect(reached.wait(timeout: .now() + 10) == .success)
        rig.board.close()
        #expect(rig.board.drain().map(\.id) == [2, 3], "the rest is the server's to log and keep")
        #expect(rig.speaker.speaking?.id == 1)
        release.signal()
        #expect(rig.speaker.waitUntilFinished(timeout: 10))
        #expect(rig.log.text.contains("spoke #1"))
        #expect(!rig.log.text.contains("speaking #2"))
        #expect(rig.output.utterances == [Record(samples: 1000, ended: true)])
    }

    @Test func stoppingTheOutputMidSpeechCutsTheAnnouncementAndKeepsItInTheSpool() throws {
        let reached = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let spool = try Self.temporarySpool()
        let rig = try Rig(spool: spool, synthesizer: Self.pausing(at: Self.tenCharacters, reached: reached, release: release))
        rig.submit(Self.tenCharacters, "一号")
        rig.speaker.start()
        #expect(reached.wait(timeout: .now() + 10) == .success)
        rig.output.stop()
        release.signal()
        #expect(rig.speaker.waitUntilFinished(timeout: 10), "the speaker stops with the output")
        #expect(rig.log.text.contains(
            "#1 was cut by the shutdown; it stays in the spool and is said from its start after the next start"))
        #expect(rig.board.drain().map(\.id) == [1, 2], "back at the front")
        #expect(try spool.all().map(\.id) == [1, 2])
        #expect(rig.synthesizer.samplesDelivered < 1000, "the synthesis was cancelled")
    }

    @Test func maxSpeechCutsALongAnnouncementCountsItDoneAndSpeaksTheNext() throws {
        let spool = try Self.temporarySpool()
        let rig = try Rig(maximumSpeechSeconds: 2, spool: spool)
        let long = String(repeating: Self.tenCharacters, count: 10)  // 10 s
        rig.submit(long, "欢迎光临")
        rig.speaker.start()
        #expect(rig.log.waitFor("spoke #2"))
        #expect(rig.log.text.contains("cut #1 after 2 s (--max-speech 2)"))
        #expect(!rig.log.text.contains("spoke #1"))
        #expect(rig.output.utterances == [Record(samples: 2000, ended: true), Record(samples: 400, ended: true)])
        #expect(rig.synthesizer.synthesized == [long, "欢迎光临"], "not said again")
        #expect(rig.synthesizer.samplesDelivered < 2100 + 400, "the synthesis was cancelled at the limit")
        rig.board.sync()
        #expect(try spool.all().isEmpty)
        #expect(rig.finish())
    }

    @Test func anAnnouncementJustUnderMaxSpeechIsSpokenWhole() throws {
        let rig = try Rig(maximumSpeechSeconds: 1)
        rig.submit(Self.tenCharacters)
        rig.speaker.start()
        #expect(rig.log.waitFor("spoke #1"))
        #expect(rig.output.utterances == [Record(samples: 1000, ended: true)])
        #expect(!rig.log.text.contains("cut"))
        #expect(rig.finish())
    }
}
