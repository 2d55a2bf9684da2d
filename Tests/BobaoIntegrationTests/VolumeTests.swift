import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// `{"cmd": "volume"}` and `bobao volume` against a PulseAudio of the suite's own: the stream's volume as
    /// the sound server reports it, the speech measurably quieter at the sink's monitor, the volume kept in
    /// the spool across a `kill -9`, only in memory with `--no-spool`, and hostile values refused.
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct VolumeTests {
        let sound: PrivatePulseServer
        let state: String

        init() throws {
            sound = try PrivatePulseServer(sinkName: "volume_tests")
            state = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-volume-\(UUID())").path
        }

        /// Bobao's stream volume in percent, from `pactl -f json list sink-inputs` (no locale in it); nil
        /// while Bobao has no stream.
        func streamVolume(on pulse: PrivatePulseServer? = nil) throws -> Int? {
            let listing = try (pulse ?? sound).pactl("-f", "json", "list", "sink-inputs")
            let inputs = try #require(try JSONSerialization.jsonObject(with: Data(listing.utf8)) as? [[String: Any]])
            for input in inputs {
                guard let properties = input["properties"] as? [String: Any],
                      properties["application.name"] as? String == "Bobao" else { continue }
                let channels = try #require(input["volume"] as? [String: [String: Any]], "\(input)")
                let value = try #require(channels.values.first?["value"] as? Int, "\(input)")
                return Int((Double(value) * 100 / 65536).rounded())
            }
            return nil
        }

        /// Polls the stream volume until it is `percent`: the server applies a volume with a request it does
        /// not wait for, and PulseAudio tells only subscribers of changes, so a short poll with a deadline is
        /// the plain way to see it.
        func waitForStreamVolume(_ percent: Int, on pulse: PrivatePulseServer? = nil, timeout: Double = 5) throws -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if try streamVolume(on: pulse) == percent { return true }
                Thread.sleep(forTimeInterval: 0.05)
            }
            return try streamVolume(on: pulse) == percent
        }

        /// Says `text` and returns what the monitor heard of it.
        func heard(_ text: String, on bobao: ServerProcess, recorder: MonitorRecorder) throws -> SignalAnalysis {
            let from = recorder.samples.count
            let reply = try #require(try bobao.exchange(text + "\n").first)
            let number = try #require(reply.hasPrefix("OK ") ? reply.dropFirst(3) : nil, "\(reply)")
            #expect(bobao.waitForLog("spoke #\(number)"))
            // "spoke" is logged once the last sample is heard; the monitor hands it over within its latency.
            recorder.record(seconds: 0.3)
            return SignalAnalysis(Array(recorder.samples[from...]), sampleRate: recorder.sampleRate)
        }

        func volume(_ arguments: String..., on bobao: ServerProcess) throws -> ProgramResult {
            try BobaoBinary.run(["volume"] + arguments + ["--to", bobao.address])
        }

        @Test func aVolumeSetAtRunTimeQuietsTheStreamAndIsAppliedAgainAfterAKill() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: "volume_tests")
            let environment = ["XDG_STATE_HOME": state]
            let first = try ServerProcess(pulseServer: sound.address, environment: environment)
            #expect(first.waitForLog("keep-alive stream open"))
            #expect(!first.log.contains("stream volume"), "nothing to say until a client sets one")
            #expect(try streamVolume() == 100, "the sound server's own volume for a new stream")
            #expect(try volume(on: first).stdoutText == "OK volume not set (the sound server's own)\n")
            let text = "请三号到一号窗口"
            let loud = try heard(text, on: first, recorder: recorder)
            #expect(loud.peak > 4000, "the speech is heard: peak \(loud.peak)")

            let set = try volume("50", on: first)
            #expect(set.status == 0, "\(set.stderr)")
            #expect(set.stdoutText == "OK volume set to 50\n")
            #expect(try waitForStreamVolume(50))
            #expect(first.log.contains("stream volume set to 50 % by 127.0.0.1:"))
            #expect(try volume(on: first).stdoutText == "OK volume 50\n")
            let status = try #require(try first.exchange(#"{"cmd":"status"}"# + "\n").first)
            let report = try #require(try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])
            #expect((report["sound"] as? [String: Any])?["volume"] as? Int == 50, "\(status)")
            // PulseAudio's volume is cubic: 50 % is 0.125 of the amplitude (-18 dB).
            let quiet = try heard(text, on: first, recorder: recorder)
            let ratio = Double(quiet.peak) / Double(loud.peak)
            #expect(ratio > 0.09 && ratio < 0.17, "peak \(quiet.peak) against \(loud.peak): \(ratio)")
            #expect(quiet.rms < loud.rms / 5, "energy \(quiet.rms) against \(loud.rms)")
            print("volume 50 %: peak \(quiet.peak) against \(loud.peak) (\(ratio)), rms \(quiet.rms) against \(loud.rms)")

            // kill -9: the volume is in the spool, and the next start applies it to its new stream.
            #expect(first.stop(signal: SIGKILL) == 128 + SIGKILL)
            let second = try ServerProcess(pulseServer: sound.address, environment: environment)
            #expect(second.waitForLog("keep-alive stream open"))
            #expect(second.log.contains("stream volume 50 % (set by `bobao volume`)"))
            #expect(try waitForStreamVolume(50))
            #expect(try volume(on: second).stdoutText == "OK volume 50\n")
            let again = try heard(text, on: second, recorder: recorder)
            let ratioAgain = Double(again.peak) / Double(loud.peak)
            #expect(ratioAgain > 0.09 && ratioAgain < 0.17, "after the restart: peak \(again.peak) against \(loud.peak)")
            // Back to full, kept too.
            #expect(try volume("100", on: second).stdoutText == "OK volume set to 100\n")
            #expect(try waitForStreamVolume(100))
            #expect(second.stop() == 0)
            let third = try ServerProcess(pulseServer: sound.address, environment: environment)
            #expect(third.waitForLog("stream volume 100 % (set by `bobao volume`)"))
            #expect(third.stop() == 0)
        }

        @Test func aNewSoundServerConnectionKeepsTheVolume() throws {
            let pulse = try PrivatePulseServer(sinkName: "volume_restart")
            let bobao = try ServerProcess(arguments: ["--no-spool"], pulseServer: pulse.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            #expect(try bobao.exchange(#"{"cmd":"volume","value":30}"# + "\n") == ["OK volume set to 30 (in memory only: --no-spool)"])
            pulse.stop(signal: SIGKILL)
            #expect(bobao.waitForLog("sound server unavailable"))
            try pulse.start()
            #expect(bobao.waitForLog("keep-alive stream reopened", timeout: 10))
            #expect(try waitForStreamVolume(30, on: pulse), "the new stream is opened with it")
            #expect(bobao.stop() == 0)
        }

        @Test func withoutASpoolTheVolumeLastsUntilTheServerStops() throws {
            let first = try ServerProcess(arguments: ["--no-spool"], pulseServer: sound.address)
            #expect(first.waitForLog("keep-alive stream open"))
            let set = try volume("30%", on: first)
            #expect(set.status == 0 && set.stdoutText == "OK volume set to 30 (in memory only: --no-spool)\n", "\(set.stderr)")
            #expect(first.log.contains("stream volume set to 30 % by 127.0.0.1:"))
            #expect(try waitForStreamVolume(30))
            #expect(first.stop() == 0)
            let second = try ServerProcess(arguments: ["--no-spool"], pulseServer: sound.address)
            #expect(second.waitForLog("keep-alive stream open"))
            #expect(try streamVolume() == 100)
            #expect(try volume(on: second).stdoutText == "OK volume not set (the sound server's own)\n")
            #expect(second.stop() == 0)
        }

        @Test func hostileVolumesAreRefusedAndTheServerKeepsServing() throws {
            let token = "vol-secret"
            let bobao = try ServerProcess(arguments: ["--token", token], pulseServer: sound.address,
                                          environment: ["XDG_STATE_HOME": state + "-hostile"])
            #expect(bobao.waitForLog("keep-alive stream open"))
            // Without AUTH: refused and closed, the volume untouched.
            #expect(try bobao.exchange(#"{"cmd":"volume","value":0}"# + "\n") == ["ERR auth-required send AUTH <token> as the first line"])
            #expect(try volume("0", on: bobao).status == 1)
            let range = "ERR bad-field value must be a whole number from 0 to 100"
            let refusals: [(line: String, reply: String)] = [
                (#"{"cmd":"volume","value":"70"}"#, range),
                (#"{"cmd":"volume","value":70.5}"#, range),
                (#"{"cmd":"volume","value":-1}"#, range),
                (#"{"cmd":"volume","value":101}"#, range),
                (#"{"cmd":"volume","value":1e308}"#, range),
                (#"{"cmd":"volume","value":99999999999999999999999}"#, range),
                (#"{"cmd":"volume","value":false}"#, range),
                (#"{"cmd":"volume","value":null}"#, range + " (leave it out to ask for the volume)"),
                (#"{"cmd":"volume","volume":70}"#, #"ERR bad-field volume does not go with "cmd" (the volume command takes "value")"#),
                (#"{"cmd":"volume","value":70,"wait":true}"#, #"ERR bad-field wait does not go with "cmd""#),
                (#"{"cmd":"volume","value":70,"loud":1}"#, "ERR bad-field loud unknown field (known: text, priority, repeat, "
                    + "chime, voice, rate, pitch, volume, id, ttl, max_speech, wait, cmd, all, value)"),
                (#"{"value":70}"#, #"ERR bad-field value goes only with "cmd": "volume""#),
                (#"{"cmd":null,"value":70}"#, #"ERR bad-field value goes only with "cmd": "volume""#),
                (#"{"cmd":"volume","value":70"#, "ERR bad-json not valid JSON: the line ends before the object does"),
            ]
            let lines = ["AUTH \(token)"] + refusals.map(\.line) + [#"{"cmd":"volume","value":0}"#, #"{"cmd":"volume"}"#]
            let replies = try bobao.exchange(lines.joined(separator: "\n") + "\n")
            #expect(replies.count == lines.count, "\(replies)")
            #expect(replies.first == "OK authenticated")
            for (sent, reply) in zip(refusals, replies.dropFirst()) {
                #expect(reply == sent.reply, "for \(sent.line)")
            }
            #expect(Array(replies.suffix(2)) == ["OK volume set to 0", "OK volume 0"])
            #expect(try waitForStreamVolume(0))
            #expect(bobao.log.components(separatedBy: "stream volume set to").count == 2, "only the valid one was applied")
            // Still serving: the CLI with the token, and an announcement.
            #expect(try volume("25", "--token", token, on: bobao).stdoutText == "OK volume set to 25\n")
            #expect(try bobao.exchange("AUTH \(token)\n好\n") == ["OK authenticated", "OK 1"])
            #expect(bobao.stop() == 0)
        }
    }
}
