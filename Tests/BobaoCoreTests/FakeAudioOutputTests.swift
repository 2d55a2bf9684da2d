import BobaoAudio
import BobaoPlatform
import Testing

/// The speaker's tests lean on the fake output behaving as the real one does.
struct FakeAudioOutputTests {
    typealias Record = FakeAudioOutput.Record

    @Test func aCutUtteranceRefusesWritesAndIsNotPlayed() {
        let output = FakeAudioOutput()
        let samples: [Int16] = [1, 2, 3]
        let first = output.beginUtterance()!
        #expect(samples.withUnsafeBufferPointer { output.write($0, for: first) })
        output.cut(first)
        #expect(!samples.withUnsafeBufferPointer { output.write($0, for: first) })
        output.endUtterance(first)
        #expect(!output.waitUntilPlayed(first))

        let second = output.beginUtterance()!
        output.cut(first)  // an earlier one: misses the current
        output.endUtterance(second)
        #expect(output.waitUntilPlayed(second))
        output.cut(second)  // already played: nothing to cut
        #expect(output.utterances == [Record(samples: 3, ended: false, cut: true), Record(samples: 0, ended: true)])
    }

    @Test func waitingForReadinessEndsAtTheDeadline() {
        let output = FakeAudioOutput()
        output.setReady(false, failure: "sound server unavailable")
        #expect(output.status == OutputStatus(state: "connecting", lastError: "sound server unavailable"))
        let start = WallClock.monotonicSeconds()
        #expect(!output.waitUntilReady(until: start + 0.1))
        #expect(WallClock.monotonicSeconds() - start >= 0.1)
        output.setReady(true)
        #expect(output.waitUntilReady(until: WallClock.monotonicSeconds() + 1))
        #expect(output.status.state == "playing")
        output.stop()
        #expect(output.status.state == "stopped")
    }
}
