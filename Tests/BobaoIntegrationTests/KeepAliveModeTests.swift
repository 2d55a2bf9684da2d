import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// `--keepalive noise` and `--keepalive-level`: what reaches the sink between announcements.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct KeepAliveModeTests {
        /// The level of a recording in dBFS (RMS against a full-scale 16-bit sample).
        static func dBFS(_ value: Double) -> Double { 20 * log10(max(value, 1e-9) / 32768) }

        /// One second of what the sink gets while Bobao idles.
        static func idleSecond(_ recorder: MonitorRecorder) -> SignalAnalysis {
            let begin = recorder.samples.count
            recorder.record(seconds: 1)
            return recorder.analysis(from: begin + recorder.sampleRate / 10)
        }

        /// Sends `text` as announcement `number` and expects it heard at the monitor for as long as its rendering.
        static func expectHeardInFull(
            _ text: String, number: Int, from bobao: ServerProcess, at recorder: MonitorRecorder
        ) throws {
            let begin = recorder.samples.count
            let client = try EventClient(port: bobao.port)
            try client.send(#"{"text": "\#(text)", "wait": true}"# + "\n")
            client.finishSending()
            #expect(client.waitForEvent("done", number: number) != nil, "\(client.lines)")
            #expect(recorder.waitForQuiet(after: begin, quiet: 0.3))
            let speech = try #require(recorder.analysis(from: begin).segments(bridging: .infinity).first, "no speech")
            let expected = try Rendering(text).soundingDuration
            #expect(abs(speech.duration - expected) < 0.1 * expected, "heard \(speech.duration) s of \(expected) s")
        }

        @Test func noiseIsFaintButNeverDigitalSilenceAndSpeechStillComesThrough() throws {
            let sound = try TestSoundServer.shared()
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let bobao = try ServerProcess(arguments: ["--no-spool", "--keepalive", "noise"], pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            let idle = Self.idleSecond(recorder)
            let nonZero = idle.samples.filter { $0 != 0 }.count
            #expect(nonZero > idle.samples.count / 2, "the noise reaches the sink: \(nonZero) non-zero samples")
            let rms = Self.dBFS(idle.rms), peak = Self.dBFS(Double(idle.peak))
            // Peaks of -60 dBFS as made (uniform noise: -64.8 dBFS RMS); the sound server's resampler (22.05 to
            // 44.1 or 48 kHz, and back for the monitor) lets a few peaks rise by some dB.
            #expect(rms < -50 && peak < -50, "noise at \(rms) dBFS RMS, peak \(peak) dBFS")
            #expect(rms > -70, "noise at \(rms) dBFS RMS, asked for peaks of -60")

            try Self.expectHeardInFull("欢迎光临", number: 1, from: bobao, at: recorder)
            // And the noise again after it.
            let after = Self.idleSecond(recorder)
            #expect(after.samples.filter { $0 != 0 }.count > after.samples.count / 2)
            #expect(Self.dBFS(after.rms) < -50)
            print("keepalive noise: \(rms) dBFS RMS, peak \(peak) dBFS")
            #expect(bobao.stop() == 0)
        }

        @Test func theNoiseLevelIsTheOneAskedFor() throws {
            let sound = try TestSoundServer.shared()
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let bobao = try ServerProcess(
                arguments: ["--no-spool", "--keepalive", "noise", "--keepalive-level", "-45"], pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            let rms = Self.dBFS(Self.idleSecond(recorder).rms)
            #expect(abs(rms - (-45 - 4.8)) < 3, "noise at \(rms) dBFS RMS, asked for peaks of -45 (-49.8 RMS)")
            #expect(bobao.stop() == 0)
        }

        @Test func silenceIsDigitalSilence() throws {
            let sound = try TestSoundServer.shared()
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let bobao = try ServerProcess(arguments: ["--no-spool"], pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            #expect(Self.idleSecond(recorder).peak == 0)
            #expect(bobao.stop() == 0)
        }
    }
}

extension SoundSuites.KeepAliveTests {
    @Test func keepAliveOffLetsTheSinkSuspendAndStillSpeaks() throws {
        let pulse = try PrivatePulseServer(
            sinkName: "sleepy", extraConfiguration: ["load-module module-suspend-on-idle timeout=1"])
        let bobao = try ServerProcess(arguments: ["--no-spool", "--keepalive", "off"], pulseServer: pulse.address)
        #expect(bobao.waitForLog("the stream opens when there is something to say"))
        #expect(try waitForSinkState("SUSPENDED", on: pulse, timeout: 5), "no stream: the sink suspends")
        #expect(try pulse.pactl("list", "sink-inputs").contains("Bobao") == false)

        let recorder = try MonitorRecorder(address: pulse.address, sinkName: "sleepy")
        try SoundSuites.KeepAliveModeTests.expectHeardInFull("欢迎光临", number: 1, from: bobao, at: recorder)
        _ = recorder.stop()

        // Two idle seconds later the stream closes, and the sink suspends again.
        #expect(bobao.waitForLog("idle: stream closed until the next announcement", timeout: 10))
        #expect(try waitForSinkState("SUSPENDED", on: pulse, timeout: 5))
        #expect(bobao.stop() == 0)
    }
}
