import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// `--duck`: other streams on Bobao's sink are lowered while it speaks and restored after, heard at the
    /// sink's monitor and read back with `pactl`.
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct DuckingTests {
        let sound: TestSoundServer.Connection
        static let sentence = "请保管好您的随身物品，祝您生活愉快"
        static let ducked = 19661  // 30 % of 65536
        static let normal = 65536

        init() throws {
            sound = try TestSoundServer.shared()
        }

        func stateFolder() -> String {
            FileManager.default.temporaryDirectory.appendingPathComponent("bobao-ducking-\(UUID())").path
        }

        @Test func musicIsLoweredWhileBobaoSpeaksAndBackWithin500MillisecondsAfter() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let tone = try ToneStream(address: sound.address)
            let bobao = try ServerProcess(pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            _ = try #require(try tone.sinkInput())
            // The tone at full level at the monitor, for half a second, before anything is said.
            let before = recorder.samples.count
            #expect(recorder.waitUntil(timeout: 10) {
                $0.count > before + 11025
                    && SignalAnalysis($0, sampleRate: 22050).toneLevels(from: Double($0.count - 11025) / 22050, to: Double($0.count) / 22050)
                        .allSatisfy { $0 > ToneStream.amplitude * 0.8 }
            })
            let reference = quantile(recorder.analysis.toneLevels(
                from: recorder.analysis.duration - 0.5, to: recorder.analysis.duration), 0.5)

            #expect(try bobao.exchange(Self.sentence + "\n") == ["OK 1"])
            #expect(try tone.waitForVolume { $0 == Self.ducked }, "the tone's stream is lowered to 30 %")
            let own = try SinkInput.list(address: sound.address).filter { $0.properties["application.name"] == "Bobao" }
            #expect(!own.isEmpty && own.allSatisfy { $0.volume.allSatisfy { $0 == Self.normal } }, "Bobao's own stream is never lowered")
            #expect(bobao.waitForLog("spoke #1", timeout: 20))
            #expect(bobao.waitForLog("restored 1 stream(s)", timeout: 5))
            recorder.record(seconds: 1.5)

            let analysis = recorder.analysis
            let speech = analysis.speech()
            let start = try #require(speech.first).start, end = try #require(speech.last).end
            #expect(end - start > 1.5, "speech \(speech)")
            let during = analysis.toneLevels(from: start + 0.2, to: end - 0.1)
            let duckedLevel = quantile(during, 0.25)
            let drop = decibels(duckedLevel, relativeTo: reference)
            #expect(drop < -20, "the tone dropped \(drop) dB while Bobao spoke (30 % is -31 dB)")
            // Back to within 1 dB of its level, and staying there, within 500 ms of the last audible sound (the
            // player drops eSpeak's quiet end, so the speaker learns the speech was heard right then).
            let after = analysis.toneLevels(from: end, to: analysis.duration, window: 0.02)
            let back = try #require(after.indices.first { index in
                after[index...].allSatisfy { decibels($0, relativeTo: reference) > -1 }
            })
            let restoredAfter = Double(back) * 0.02
            #expect(restoredAfter < 0.5, "the tone came back \(restoredAfter) s after the speech ended")
            let lowering = analysis.toneLevels(from: start - 0.5, to: start + 1, window: 0.02)
            let down = lowering.firstIndex { decibels($0, relativeTo: reference) < -20 }.map { Double($0) * 0.02 - 0.5 }
            print("ducking: tone \(Int(reference)) before, \(Int(duckedLevel)) during speech (\(drop) dB); under -20 dB "
                + "\(down ?? .nan) s after the speech began; back \(restoredAfter) s after it ended")
            #expect(try tone.sinkInput()?.volume.first == Self.normal)
            #expect(bobao.stop() == 0)
        }

        @Test func aStreamThatStartsWhileBobaoSpeaksIsLoweredToo() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let bobao = try ServerProcess(pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            #expect(try bobao.exchange(Self.sentence + Self.sentence + "\n") == ["OK 1"])
            #expect(recorder.waitUntil(timeout: 10) { SignalAnalysis($0, sampleRate: 22050).speech().count > 0 })
            let tone = try ToneStream(address: sound.address)
            #expect(try tone.waitForVolume(timeout: 2) { $0 == Self.ducked }, "lowered as it appears")
            #expect(bobao.waitForLog("spoke #1", timeout: 30))
            #expect(bobao.waitForLog("restored 1 stream(s) (1 lowered when they appeared)", timeout: 5))
            #expect(try tone.sinkInput()?.volume.first == Self.normal)
            recorder.record(seconds: 0.5)

            // Heard lowered from its first moments until the speech ends, then at its full level.
            let analysis = recorder.analysis
            let end = try #require(analysis.speech().last).end
            let levels = analysis.toneLevels(from: 0, to: end)
            let onset = try #require(levels.firstIndex { $0 > 30 })
            let during = Array(levels[(onset + 4)...])
            let full = quantile(analysis.toneLevels(from: analysis.duration - 0.3, to: analysis.duration), 0.5)
            #expect(during.count > 10 && decibels(quantile(during, 0.25), relativeTo: full) < -20,
                    "\(during.map { Int($0) }) against \(full)")
            #expect(bobao.stop() == 0)
        }

        @Test func aVolumeSomeoneChangesMeanwhileIsLeftAsItIs() throws {
            let tone = try ToneStream(address: sound.address)
            let input = try #require(try tone.sinkInput())
            let bobao = try ServerProcess(pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            #expect(try bobao.exchange(Self.sentence + "\n") == ["OK 1"])
            #expect(try tone.waitForVolume { $0 == Self.ducked })
            let result = try runProgram(
                "pactl", ["set-sink-input-volume", String(input.index), "50%"], environment: sound.clientEnvironment)
            #expect(result.status == 0)
            #expect(bobao.waitForLog("restored 0 stream(s) (1 changed by someone else meanwhile, left as they are)", timeout: 20))
            #expect(tone.volume == 32768)
            #expect(bobao.stop() == 0)
        }

        @Test func duckOneLeavesOtherStreamsAlone() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let tone = try ToneStream(address: sound.address)
            _ = try #require(try tone.sinkInput())
            let bobao = try ServerProcess(arguments: ["--duck", "1"], pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            #expect(try bobao.exchange(Self.sentence + "\n") == ["OK 1"])
            // Polled through the whole announcement.
            var polls = 0
            while !bobao.waitFor(timeout: 0.05, { $0.contains("spoke #1") }) && polls < 400 {
                #expect(tone.volume == Self.normal)
                polls += 1
            }
            #expect(polls > 10)
            recorder.record(seconds: 0.3)
            let analysis = recorder.analysis
            let speech = analysis.speech()
            let start = try #require(speech.first).start, end = try #require(speech.last).end
            let full = quantile(analysis.toneLevels(from: analysis.duration - 0.3, to: analysis.duration), 0.5)
            let during = quantile(analysis.toneLevels(from: start + 0.2, to: end - 0.1), 0.25)
            #expect(abs(decibels(during, relativeTo: full)) < 1.5, "\(during) during speech, \(full) after")
            #expect(!bobao.log.contains("ducked"))
            #expect(bobao.stop() == 0)
        }

        @Test(arguments: ["1.5", "-0.1", "abc", "nan"])
        func aDuckFactorOutOfRangeIsRefused(value: String) throws {
            let result = try BobaoBinary.run(["serve", "--listen", "127.0.0.1:0", "--no-spool", "--duck", value])
            #expect(result.status == 2)
            #expect(result.stderr.contains("--duck must be a factor from 0 to 1"), "\(result.stderr)")
        }
    }
}
