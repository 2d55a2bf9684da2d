import BobaoCore
import BobaoPlatform
@testable import BobaoServer
import Dispatch
import Glibc
import Synchronization
import Testing

/// The speaker with per-message options, against the fakes (1000 samples a second; 100 per character):
/// repeat, chime, cut-in by an urgent one, skip, per-message max_speech and ttl, no sound server.
@Suite(.timeLimit(.minutes(1)))
struct SpeakerOptionTests {
    typealias Rig = SpeakerTests.Rig
    typealias Record = FakeAudioOutput.Record

    /// Events a watcher received, as `name` strings.
    final class Events: Sendable {
        private let seen = Mutex<[String]>([])
        private let arrived = DispatchSemaphore(value: 0)
        var watcher: AnnouncementBoard.Watcher {
            { event in
                self.seen.withLock { $0.append(event.reason.map { "\(event.name): \($0)" } ?? event.name) }
                self.arrived.signal()
            }
        }
        var all: [String] { seen.withLock { $0 } }
        /// Waits for an outcome.
        func waitForOutcome() -> Bool {
            while arrived.wait(timeout: .now() + 10) == .success {
                if let last = all.last, !last.hasPrefix("start"), !last.hasPrefix("interrupted"), !last.hasPrefix("waiting") { return true }
            }
            return false
        }
    }

    private func submit(_ rig: Rig, _ text: String, _ edit: (inout MessageOptions) -> Void = { _ in }) throws -> (UInt64, Events) {
        var options = MessageOptions()
        edit(&options)
        let number = try rig.board.submit(Submission(text: text, options: options)).get().number
        let events = Events()
        #expect(rig.board.watch(number, events.watcher))
        return (number, events)
    }

    @Test func repeatSaysTheTextAgainAfterAPauseInOneUtterance() throws {
        let rig = try Rig()
        let (_, events) = try submit(rig, "一号请取餐") { $0.repeatCount = 2 }
        rig.speaker.start()
        #expect(events.waitForOutcome())
        #expect(events.all == ["start", "done"])
        #expect(rig.synthesizer.synthesized == ["一号请取餐", "一号请取餐"])
        #expect(rig.output.utterances == [Record(samples: 500 + 800 + 500, ended: true)], "speech, 0.8 s pause, speech")
        #expect(rig.finish())
    }

    @Test func theChimeComesFirstAtTheMessagesVolume() throws {
        let asked = Mutex<[ChimeChoice]>([])
        let rig = try Rig(chime: { choice in
            asked.withLock { $0.append(choice) }
            return choice == .off ? nil : [Int16](repeating: 10_000, count: 300)
        })
        let (_, events) = try submit(rig, "欢迎光临") {
            $0.chime = .on
            $0.volume = 50
        }
        let (_, plain) = try submit(rig, "欢迎光临") { $0.chime = .off }
        rig.speaker.start()
        #expect(events.waitForOutcome() && plain.waitForOutcome())
        #expect(asked.withLock { $0 } == [.on, .off])
        #expect(rig.output.utterances == [Record(samples: 300 + 400, ended: true), Record(samples: 400, ended: true)])
        #expect(Speaker.scaled([10_000, -20_000, 30_000], volume: 50) == [5_000, -10_000, 15_000])
        #expect(Speaker.scaled([30_000], volume: 200) == [32_767], "clamped, never wrapped")
        #expect(rig.finish())
    }

    @Test func anUrgentOneCutsInAndTheCutOneIsSaidAgainInFull() throws {
        let reached = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let rig = try Rig(synthesizer: SpeakerTests.pausing(at: SpeakerTests.tenCharacters, reached: reached, release: release))
        let (_, long) = try submit(rig, SpeakerTests.tenCharacters)
        rig.speaker.start()
        #expect(reached.wait(timeout: .now() + 10) == .success)
        let (_, urgent) = try submit(rig, "紧急通知") { $0.priority = .urgent }
        release.signal()  // the cut utterance's writes now fail and its synthesis ends
        #expect(urgent.waitForOutcome())
        #expect(reached.wait(timeout: .now() + 10) == .success, "said again: the fake pauses it at the same place")
        release.signal()
        #expect(long.waitForOutcome())
        #expect(long.all == ["start", "interrupted", "start", "done"])
        #expect(urgent.all == ["start", "done"])
        #expect(rig.synthesizer.synthesized == [SpeakerTests.tenCharacters, "紧急通知", SpeakerTests.tenCharacters])
        let records = rig.output.utterances
        #expect(records.count == 3)
        #expect(records.first?.cut == true && (records.first?.samples ?? 0) < 1000)
        #expect(Array(records.dropFirst()) == [Record(samples: 400, ended: true), Record(samples: 1000, ended: true)])
        #expect(rig.log.text.contains("#1 gave way to an urgent announcement"))
        #expect(rig.board.snapshot.counters["interrupted"] == 1)
        #expect(rig.finish())
    }

    @Test func skipStopsTheOneSpeakingAsCancelledAndTheNextFollows() throws {
        let reached = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let rig = try Rig(synthesizer: SpeakerTests.pausing(at: SpeakerTests.tenCharacters, reached: reached, release: release))
        let (number, long) = try submit(rig, SpeakerTests.tenCharacters)
        let (_, next) = try submit(rig, "下一位")
        rig.speaker.start()
        #expect(reached.wait(timeout: .now() + 10) == .success)
        #expect(rig.board.skip() == "OK skipped #\(number)\n")
        release.signal()
        #expect(long.waitForOutcome() && next.waitForOutcome())
        #expect(long.all == ["start", "cancelled: skipped by a client"])
        #expect(next.all == ["start", "done"])
        #expect(rig.synthesizer.synthesized == [SpeakerTests.tenCharacters, "下一位"], "not said again")
        #expect(rig.output.utterances.first?.cut == true)
        #expect(rig.finish())
    }

    @Test func aMessagesOwnMaxSpeechCutsIt() throws {
        let rig = try Rig()
        let (_, events) = try submit(rig, SpeakerTests.tenCharacters) { $0.maximumSpeechSeconds = 0.3 }
        rig.speaker.start()
        #expect(events.waitForOutcome())
        #expect(events.all == ["start", "cut"])
        #expect(rig.output.utterances == [Record(samples: 300, ended: true)])
        #expect(rig.log.text.contains("cut #1 after 0.3 s (its max_speech)"))
        #expect(rig.finish())
    }

    @Test func withoutASoundServerUntilItsTTLRunsOutAMessageFailsWithTheReason() throws {
        let rig = try Rig()
        rig.output.setReady(false, failure: "Connection refused")
        let (_, events) = try submit(rig, "没人听") { $0.ttlSeconds = 0.2 }
        rig.speaker.start()
        #expect(events.waitForOutcome())
        #expect(events.all == [
            "waiting: no sound server to play it on (Connection refused)",
            "failed: no sound server to play it on (Connection refused)",
        ])
        #expect(rig.output.utterances.isEmpty)
        #expect(rig.board.snapshot.lastError?.contains("no sound server") == true)
        #expect(rig.finish())
    }

    @Test func cancellingOneThatWaitsForTheSoundServerEndsItAtOnce() throws {
        let rig = try Rig()
        rig.output.setReady(false, failure: "Connection refused")
        let (_, events) = try submit(rig, "等声音") {
            $0.clientID = "k"
            $0.ttlSeconds = 60
        }
        rig.speaker.start()
        // The speaker has taken it and waits for the output.
        let until = WallClock.monotonicSeconds() + 10
        while rig.speaker.speaking == nil && WallClock.monotonicSeconds() < until { usleep(1_000) }
        #expect(try rig.board.cancel(.id("k")).get() == "OK cancelled #1\n")
        #expect(events.waitForOutcome(), "within seconds, not at the end of its 60 s ttl")
        #expect(events.all == ["waiting: no sound server to play it on (Connection refused)", "cancelled: cancelled by a client"])
        #expect(rig.finish())
    }

    @Test func aMessagesOwnTTLExpiresItBehindALongOne() throws {
        let reached = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let rig = try Rig(synthesizer: SpeakerTests.pausing(at: SpeakerTests.tenCharacters, reached: reached, release: release))
        let (_, long) = try submit(rig, SpeakerTests.tenCharacters)
        rig.speaker.start()
        #expect(reached.wait(timeout: .now() + 10) == .success)
        let (_, brief) = try submit(rig, "过期") { $0.ttlSeconds = 0.05 }
        // Its ttl has to run out while the long one speaks: time passing is what is tested here.
        let until = WallClock.monotonicSeconds() + 0.1
        while WallClock.monotonicSeconds() < until { usleep(5_000) }
        release.signal()
        #expect(long.waitForOutcome() && brief.waitForOutcome())
        #expect(brief.all == ["expired"])
        #expect(rig.log.text.contains("after its ttl of 0.05 s; not spoken"))
        #expect(rig.synthesizer.synthesized == [SpeakerTests.tenCharacters])
        #expect(rig.finish())
    }
}
