import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// Ducked volumes come back whatever happens: a stop, a `kill -9` (at the next start, from the state file
    /// next to the spool), streams that vanish, a sound server that restarts; and only the right streams are
    /// ever lowered.
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct DuckingRecoveryTests {
        let sound: TestSoundServer.Connection
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-ducking-\(UUID())").path
        static let long = String(repeating: "请保管好您的随身物品，", count: 3)
        static let ducked = DuckingTests.ducked
        static let normal = DuckingTests.normal

        init() throws {
            sound = try TestSoundServer.shared()
        }

        var stateFile: String { state + "/bobao/spool.db-ducking" }

        @Test func sigtermRestoresVolumesBeforeTheProcessExits() throws {
            let tone = try ToneStream(address: sound.address)
            _ = try #require(try tone.sinkInput())
            let bobao = try ServerProcess(
                arguments: ["--shutdown-timeout", "0"], pulseServer: sound.address, environment: ["XDG_STATE_HOME": state])
            #expect(bobao.waitForLog("keep-alive stream open"))
            #expect(try bobao.exchange(Self.long + "\n") == ["OK 1"])
            #expect(try tone.waitForVolume { $0 == Self.ducked })
            #expect(FileManager.default.fileExists(atPath: stateFile), "written before ducking")
            #expect(bobao.stop() == 0)
            #expect(tone.volume == Self.normal, "restored by the time the process is gone")
            #expect(bobao.log.contains("restored 1 stream(s) on the way out"))
            #expect(!FileManager.default.fileExists(atPath: stateFile))
        }

        @Test func afterKill9TheNextStartRestoresWhatWasLowered() throws {
            let tone = try ToneStream(address: sound.address)
            _ = try #require(try tone.sinkInput())
            let environment = ["XDG_STATE_HOME": state]
            let first = try ServerProcess(pulseServer: sound.address, environment: environment)
            #expect(first.waitForLog("keep-alive stream open"))
            #expect(try first.exchange(Self.long + "\n") == ["OK 1"])
            #expect(try tone.waitForVolume { $0 == Self.ducked })
            #expect(first.stop(signal: SIGKILL) == 128 + SIGKILL)
            #expect(tone.volume == Self.ducked, "nobody restored it")
            let saved = try String(contentsOfFile: stateFile, encoding: .utf8)
            #expect(saved.hasPrefix("bobao-ducking 1\n") && saved.contains("\t65536\t19661\n"), "\(saved)")

            // The next start restores it first (then says the spooled announcement again, lowering it anew).
            let second = try ServerProcess(pulseServer: sound.address, environment: environment)
            #expect(second.waitForLog("restored 1 stream(s) lowered before an unclean stop or a lost connection"))
            #expect(second.waitForLog("spoke #1", timeout: 30))
            #expect(second.waitForLog("restored 1 stream(s)\n", timeout: 10))  // PipeWire under a full suite once took over 5 s
            #expect(tone.volume == Self.normal)
            #expect(!FileManager.default.fileExists(atPath: stateFile))
            #expect(second.stop() == 0)
        }

        @Test func aDamagedStateFileIsLoggedAndIgnored() throws {
            try FileManager.default.createDirectory(atPath: state + "/bobao", withIntermediateDirectories: true)
            try "garbage\u{0}\n\t\t\n".write(toFile: stateFile, atomically: true, encoding: .utf8)
            let tone = try ToneStream(address: sound.address)
            _ = try #require(try tone.sinkInput())
            let bobao = try ServerProcess(pulseServer: sound.address, environment: ["XDG_STATE_HOME": state])
            #expect(bobao.waitForLog("the ducking state \(stateFile) is damaged; ignored"))
            #expect(try bobao.exchange("欢迎光临\n") == ["OK 1"])
            #expect(try tone.waitForVolume { $0 == Self.ducked })
            #expect(bobao.waitForLog("restored 1 stream(s)", timeout: 20))
            #expect(tone.volume == Self.normal)
            #expect(bobao.stop() == 0)
        }

        @Test func manyStreamsAreLoweredAndThoseThatVanishAreForgotten() throws {
            let tones = try (0..<8).map { _ in try ToneStream(address: sound.address) }
            for tone in tones { _ = try #require(try tone.sinkInput()) }
            let bobao = try ServerProcess(pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            #expect(try bobao.exchange(Self.long + "\n") == ["OK 1"])
            #expect(bobao.waitForLog("ducked 8 stream(s) to 30 %"))
            for tone in tones { #expect(try tone.waitForVolume { $0 == Self.ducked }) }
            tones[0].stop()
            tones[1].stop()
            #expect(bobao.waitForLog("restored 6 stream(s) (2 gone)", timeout: 30))
            for tone in tones.dropFirst(2) { #expect(tone.volume == Self.normal) }
            #expect(bobao.stop() == 0)
        }

        @Test func streamsOfOtherSinksAndOfOtherBobaosAreNeverLowered() throws {
            let pulse = try PrivatePulseServer(
                sinkName: "main", extraConfiguration: ["load-module module-null-sink sink_name=other"])
            let music = try ToneStream(address: pulse.address)
            let elsewhere = try ToneStream(address: pulse.address, sink: "other")
            let otherBobao = try ToneStream(address: pulse.address, properties: ["application.id=org.bobao.Bobao"])
            for tone in [music, elsewhere, otherBobao] { _ = try #require(try tone.sinkInput()) }
            let bobao = try ServerProcess(pulseServer: pulse.address)
            #expect(bobao.waitForLog("keep-alive stream open on sink main"))
            #expect(try bobao.exchange(Self.long + "\n") == ["OK 1"])
            #expect(try music.waitForVolume { $0 == Self.ducked })
            #expect(bobao.log.contains("ducked 1 stream(s) to 30 %"))
            #expect(elsewhere.volume == Self.normal)
            #expect(otherBobao.volume == Self.normal)
            #expect(bobao.stop() == 0)
            #expect(music.volume == Self.normal)
        }

        @Test func afterTheSoundServerRestartsDuckingGoesOn() throws {
            let pulse = try PrivatePulseServer(sinkName: "restarting")
            let bobao = try ServerProcess(pulseServer: pulse.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            do {
                let tone = try ToneStream(address: pulse.address)
                _ = try #require(try tone.sinkInput())
                #expect(try bobao.exchange("欢迎光临\n") == ["OK 1"])
                #expect(try tone.waitForVolume { $0 == Self.ducked })
                pulse.stop(signal: SIGKILL)
            }
            #expect(bobao.waitForLog("sound server unavailable"))
            try pulse.start()
            #expect(bobao.waitForLog("keep-alive stream reopened", timeout: 15))
            let tone = try ToneStream(address: pulse.address)
            _ = try #require(try tone.sinkInput())
            #expect(try bobao.exchange("欢迎光临\n") == ["OK 2"])
            #expect(try tone.waitForVolume(timeout: 10) { $0 == Self.ducked })
            #expect(bobao.waitForLog("spoke #2", timeout: 30))
            #expect(try tone.waitForVolume(timeout: 2) { $0 == Self.normal })
            #expect(bobao.stop() == 0)
        }
    }
}
