import BobaoAudio
import BobaoTestSupport
import Foundation
import Synchronization
import Testing

extension SoundSuites {
    /// The keep-alive player on its own against PulseAudio: cutting an utterance, and waiting for a sound
    /// server with a deadline.
    @Suite(.serialized, .timeLimit(.minutes(1)))
    struct PlayerCutTests {
        /// CLOCK_MONOTONIC seconds, the clock of `waitUntilReady(until:)`.
        static func now() -> Double {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }

        static func tone(_ frequency: Double, seconds: Double, amplitude: Double = 16000) -> [Int16] {
            (0..<Int(seconds * 22050)).map { Int16(amplitude * sin(2 * .pi * frequency * Double($0) / 22050)) }
        }

        static func player(serverAddress: String, sinkName: String?) -> KeepAlivePlayer {
            var configuration = PlayerConfiguration()
            configuration.serverAddress = serverAddress
            configuration.sinkName = sinkName
            return KeepAlivePlayer(configuration: configuration) { _ in }
        }

        @Test func aCutUtteranceFallsSilentAtOnceAndTheNextOneStartsWithoutTheGap() throws {
            let sound = try TestSoundServer.shared()
            // The recorder first: a monitor attached later finds the null sink rendering far ahead.
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let player = Self.player(serverAddress: sound.address, sinkName: sound.sinkName)
            player.start()
            defer { player.stop() }
            #expect(player.waitUntilReady(until: Self.now() + 10))
            #expect(player.status.state == "playing" && player.status.sink == sound.sinkName, "\(player.status)")
            recorder.record(seconds: 0.3)

            // Three seconds of a loud 1 kHz tone, cut from another thread half a second in, while `write`
            // waits for room.
            let first = try #require(player.beginUtterance())
            let begun = Self.now()
            let cutAt = Mutex<(time: Double, recorded: Int)?>(nil)
            Thread {
                Thread.sleep(forTimeInterval: 0.5)
                let recorded = recorder.samples.count
                cutAt.withLock { $0 = (Self.now(), recorded) }
                player.cut(first)
            }.start()
            let wrote = Self.tone(1000, seconds: 3).withUnsafeBufferPointer { player.write($0, for: first) }
            #expect(!wrote, "write gives up on a cut utterance")
            player.endUtterance(first)  // does nothing now
            #expect(!player.waitUntilPlayed(first))

            // The next one follows at once: a cut skips the --gap (300 ms by default).
            let second = try #require(player.beginUtterance())
            #expect(second.serial != first.serial)
            #expect(Self.tone(1500, seconds: 0.3).withUnsafeBufferPointer { player.write($0, for: second) })
            player.endUtterance(second)
            #expect(player.waitUntilPlayed(second))
            player.cut(second)  // already played: nothing to cut
            player.cut(first)  // an earlier utterance: nothing either
            #expect(player.waitUntilPlayed(second))
            recorder.record(seconds: 0.3)

            let analysis = SignalAnalysis(recorder.stop(), sampleRate: recorder.sampleRate)
            let cutTone = analysis.toneSegments(frequency: 1000, threshold: 2000)
            let nextTone = analysis.toneSegments(frequency: 1500, threshold: 2000)
            try #require(cutTone.count == 1 && nextTone.count == 1, "\(cutTone) \(nextTone)")
            let cut = try #require(cutAt.withLock { $0 })
            // The recording's 10 ms windows and parec's 20 ms chunks blur each edge.
            let slack = 0.03
            // How long the tone sounded against how long it ran before the cut: its end moved by the cut's
            // delay less the start's (both a flush away from the write).
            let ranBeforeCut = cut.time - begun
            #expect(cutTone[0].duration < ranBeforeCut + 0.05 + slack, "heard \(cutTone[0].duration) s")
            #expect(cutTone[0].duration > ranBeforeCut - 0.1, "the tone sounded until the cut")
            // On the recording's own timeline: the tone ends within 50 ms of where the recording stood when
            // cut() was called. The recorder lags the sink, so this overstates the delay, never understates.
            let stop = cutTone[0].end - Double(cut.recorded) / Double(recorder.sampleRate)
            #expect(stop < 0.05 + slack, "the tone stopped \(stop) s after the cut")
            let gap = nextTone[0].start - cutTone[0].end
            #expect(gap < 0.1, "the next utterance began \(gap) s after the cut one stopped")
            func ms(_ seconds: Double) -> Int { Int((seconds * 1000).rounded()) }
            print("cut: ran \(ms(ranBeforeCut)) ms, heard \(ms(cutTone[0].duration)) ms, "
                + "silent \(ms(stop)) ms after the cut, next one \(ms(gap)) ms later")
        }

        @Test func waitingWeeksForTheStreamIsFine() throws {
            // A message's ttl may be 30 days: the wait's timer must never carry that whole delay (libpulse
            // keeps it in an int of milliseconds and aborts on the overflow while the stream opens).
            let sound = try TestSoundServer.shared()
            let player = Self.player(serverAddress: sound.address, sinkName: sound.sinkName)
            player.start()
            defer { player.stop() }
            #expect(player.waitUntilReady(until: Self.now() + 2_592_000))
            #expect(player.isReady)
        }

        @Test func waitingForAMissingSoundServerEndsAtTheDeadline() {
            let player = Self.player(serverAddress: "unix:/nonexistent/bobao-\(UUID().uuidString)/native", sinkName: nil)
            player.start()
            defer { player.stop() }
            let start = Self.now()
            #expect(!player.waitUntilReady(until: start + 0.4))
            let waited = Self.now() - start
            #expect(waited >= 0.4 && waited < 0.6, "waited \(waited) s")
            let status = player.status
            #expect(status.state == "connecting" && status.sink == nil)
            #expect(status.lastError?.hasPrefix("sound server unavailable") == true, "\(status)")

            player.stop()
            #expect(player.status.state == "stopped")
            let stopped = Self.now()
            #expect(!player.waitUntilReady(until: stopped + 5))
            #expect(Self.now() - stopped < 0.1, "a stopped player does not wait")
        }
    }
}
