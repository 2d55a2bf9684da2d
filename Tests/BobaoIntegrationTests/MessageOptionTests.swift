import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// What a JSON announcement's options do to what is heard: volume, chime, repeat, max_speech.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct MessageOptionTests {
        /// One announcement sent with `"wait": true` and what was heard of it.
        struct Heard {
            var number: Int
            var events: [String]
            /// From the send to 0.5 s of quiet after its sound.
            var analysis: SignalAnalysis
        }

        /// Sends the JSON object of `fields` and `"wait": true` on a new connection, waits for the message's
        /// outcome event and for the recording to fall quiet after it.
        static func announce(_ fields: String, to bobao: ServerProcess, recorder: MonitorRecorder) throws -> Heard {
            let start = recorder.samples.count
            let client = try EventClient(port: bobao.port)
            try client.send("{\(fields), \"wait\": true}\n")
            client.finishSending()
            let outcomes: Set<String> = ["done", "cut", "cancelled", "expired", "failed"]
            #expect(client.waitFor(timeout: 30) { $0.contains { outcomes.contains($0.event ?? "") } }, "\(client.lines)")
            let reply = try #require(client.lines.first?.text)
            let number = try #require(reply.hasPrefix("OK ") ? Int(reply.dropFirst(3)) : nil, "\(fields): \(reply)")
            #expect(recorder.waitForQuiet(after: start, quiet: 0.5))
            #expect(client.waitForEnd(), "the connection closes after the outcome")
            return Heard(number: number, events: client.events(of: number), analysis: recorder.analysis(from: start))
        }

        /// The RMS of the sounding stretch, first to last loud window.
        static func loudness(_ analysis: SignalAnalysis) -> Double {
            guard let span = analysis.segments(bridging: .infinity).first else { return 0 }
            let rate = Double(analysis.sampleRate)
            return SignalAnalysis(Array(analysis.samples[Int(span.start * rate)..<Int(span.end * rate)]),
                                  sampleRate: analysis.sampleRate).rms
        }

        /// The amplitudes of the chime's two tones where the first and where the second should sound, from
        /// the first loud sample on. Each window leaves 10 ms at its edges, so the other tone's attack and
        /// decay stay out.
        static func tones(_ analysis: SignalAnalysis) throws
            -> (first: (high: Double, low: Double), second: (high: Double, low: Double))
        {
            let (high, low) = ChimeTone.frequencies
            let rate = Double(analysis.sampleRate)
            let onset = try #require(analysis.firstLoudSample())
            let first = (onset + Int(0.01 * rate), Int(0.16 * rate))
            let second = (onset + Int(0.19 * rate), Int(0.24 * rate))
            return (
                (analysis.toneAmplitude(frequency: high, from: first.0, count: first.1),
                 analysis.toneAmplitude(frequency: low, from: first.0, count: first.1)),
                (analysis.toneAmplitude(frequency: high, from: second.0, count: second.1),
                 analysis.toneAmplitude(frequency: low, from: second.0, count: second.1)))
        }

        /// Whether the tones are the chime's: each loud where it should be and five times the other there.
        static func isChime(_ tones: (first: (high: Double, low: Double), second: (high: Double, low: Double))) -> Bool {
            tones.first.high > 2000 && tones.first.high > 5 * tones.first.low
                && tones.second.low > 2000 && tones.second.low > 5 * tones.second.high
        }

        @Test func volumeChimeRepeatAndMaxSpeechAreHeard() throws {
            let sound = try TestSoundServer.shared()
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let bobao = try ServerProcess(arguments: ["--no-spool"], pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            let text = "欢迎光临"
            let rendering = try Rendering(text)
            let single = rendering.soundingDuration
            let rate = Double(recorder.sampleRate)

            // Volume: the same text at 100 (eSpeak's normal) and at 30.
            let loud = try Self.announce(#""text": "\#(text)", "volume": 100"#, to: bobao, recorder: recorder)
            let quiet = try Self.announce(#""text": "\#(text)", "volume": 30"#, to: bobao, recorder: recorder)
            #expect(loud.events == ["start", "done"] && quiet.events == ["start", "done"])
            for heard in [loud, quiet] {
                let duration = heard.analysis.soundingDuration()
                #expect(abs(duration - single) < 0.1 * single, "heard \(duration) s of \(single) s")
            }
            let ratio = Self.loudness(quiet.analysis) / Self.loudness(loud.analysis)
            // eSpeak's amplitude is linear in its volume: 0.30 here.
            #expect(ratio > 0.2 && ratio < 0.4, "volume 30 sounds at \(ratio) of volume 100")

            // Chime: the two tones, E6 then C6, in the first 0.44 s, then the speech. The plain announcement
            // above is the control: its opening has neither tone.
            let chimed = try Self.announce(#""text": "\#(text)", "chime": true"#, to: bobao, recorder: recorder)
            #expect(chimed.events == ["start", "done"])
            let chime = try Self.tones(chimed.analysis), plain = try Self.tones(loud.analysis)
            #expect(Self.isChime(chime), "\(chime)")
            #expect(plain.first.high < 0.2 * chime.first.high && plain.second.low < 0.2 * chime.second.low,
                    "without a chime: \(plain), with: \(chime)")
            // The speech follows the chime (0.44 s of tones, 0.08 s of silence) and is the whole text.
            let chimeOnset = Double(try #require(chimed.analysis.firstLoudSample())) / rate
            let chimedSegments = chimed.analysis.segments(bridging: 0.05)
            let speech = try #require(chimedSegments.last)
            #expect(speech.start - chimeOnset > 0.5 && speech.start - chimeOnset < 0.65, "\(chimeOnset) \(chimedSegments)")
            let speechHeard = chimed.analysis.soundingDuration() - (speech.start - chimeOnset)
            #expect(abs(speechHeard - single) < 0.1 * single, "speech after the chime: \(speechHeard) s of \(single) s")

            // Repeat: said twice, 0.8 s apart (plus the rendering's own quiet at its end and start).
            let repeated = try Self.announce(#""text": "\#(text)", "repeat": 2"#, to: bobao, recorder: recorder)
            #expect(repeated.events == ["start", "done"])
            let bursts = repeated.analysis.segments()
            try #require(bursts.count == 2, "\(bursts)")
            for burst in bursts {
                #expect(abs(burst.duration - single) < 0.1 * single, "\(burst) against \(single) s")
            }
            let pause = bursts[1].start - bursts[0].end
            let expectedPause = rendering.trailingQuiet + Speaker.repeatPauseSeconds + rendering.leadingQuiet
            #expect(abs(pause - expectedPause) < 0.08, "pause \(pause) s, expected \(expectedPause) s")

            // max_speech: two thousand digits (minutes of speech) cut after 2 s, reported as cut.
            let digits = String((0..<2000).map { Character(String($0 * 7 % 10)) })
            let cut = try Self.announce(#""text": "\#(digits)", "max_speech": 2"#, to: bobao, recorder: recorder)
            #expect(cut.events == ["start", "cut"])
            let cutHeard = cut.analysis.soundingDuration()
            #expect(cutHeard > 1.7 && cutHeard < 2.5, "heard \(cutHeard) s")

            #expect(bobao.stop() == 0)
            let log = bobao.log
            #expect(log.contains("speaking #\(chimed.number) \"\(text)\" (chime)"), "\(log)")
            #expect(log.contains("speaking #\(repeated.number) \"\(text)\" (repeat 2)"))
            #expect(log.contains("cut #\(cut.number) after 2 s (its max_speech); counted as spoken"))
            print("options: volume 30 at \(ratio) of 100; chime \(chime), plain \(plain); repeat pause \(pause) s "
                + "(expected \(expectedPause)); max_speech 2 heard \(cutHeard) s")
        }
        @Test func theServersChimeIsPlayedUnlessAMessageTurnsItOff() throws {
            let sound = try TestSoundServer.shared()
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let bobao = try ServerProcess(arguments: ["--no-spool", "--chime", "ding"], pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            let withChime = try Self.announce(#""text": "好""#, to: bobao, recorder: recorder)
            let without = try Self.announce(#""text": "好", "chime": false"#, to: bobao, recorder: recorder)
            let chime = try Self.tones(withChime.analysis), plain = try Self.tones(without.analysis)
            #expect(Self.isChime(chime), "--chime ding: \(chime)")
            #expect(plain.first.high < 0.2 * chime.first.high && plain.second.low < 0.2 * chime.second.low,
                    "\"chime\": false: \(plain)")
            let single = try Rendering("好").soundingDuration
            let plainHeard = without.analysis.soundingDuration()
            #expect(abs(plainHeard - single) < 0.1, "without the chime only the speech: \(plainHeard) s of \(single) s")
            #expect(bobao.stop() == 0)

            let unknown = try BobaoBinary.run(["serve", "--listen", "127.0.0.1:0", "--no-spool", "--chime", "gong"],
                                              environment: ["PULSE_SERVER": sound.address])
            #expect(unknown.status == 2)
            #expect(unknown.stderr.contains("--chime: no chime named 'gong'"), "\(unknown.stderr)")
        }
    }
}
