import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// SIGHUP stops like SIGTERM; a second stop signal during the graceful stop ends it at once.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct SignalTests {
        let sound: TestSoundServer.Connection
        let state: String

        init() throws {
            sound = try TestSoundServer.shared()
            state = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-signals-\(UUID())").path
        }

        @Test func sighupIsAGracefulStopThatFinishesTheAnnouncementBeingSpoken() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let bobao = try ServerProcess(pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            #expect(try bobao.exchange("请保管好您的随身物品，祝您生活愉快\n") == ["OK 1"])
            #expect(recorder.waitUntil(timeout: 10) { SignalAnalysis($0, sampleRate: 22050).firstLoudSample() != nil })
            #expect(bobao.stop(signal: SIGHUP) == 0)
            #expect(bobao.log.contains("received SIGHUP: no longer accepting; finishing the current announcement"))
            #expect(bobao.log.contains("spoke #1"))
            #expect(bobao.log.hasSuffix("bobao: stopped\n"))
        }

        @Test func aSecondSigtermStopsAtOnceAndTheSpoolKeepsWhatWasNotSpoken() throws {
            let environment = ["XDG_STATE_HOME": state]
            let first = try ServerProcess(
                arguments: ["--shutdown-timeout", "30"], pulseServer: sound.address, environment: environment)
            #expect(first.waitForLog("keep-alive stream open"))
            let long = String(repeating: "请保管好您的随身物品，", count: 8)
            #expect(try first.exchange(long + "\n一号\n二号\n") == ["OK 1", "OK 2", "OK 3"])
            #expect(first.waitForLog("speaking #1 "))
            kill(first.pid, SIGTERM)
            #expect(first.waitForLog("received SIGTERM: no longer accepting"))
            #expect(first.waitForLog("finishing #1 before exit"))
            let again = Date()
            #expect(first.stop(signal: SIGTERM, timeout: 10) == 1)
            let took = Date().timeIntervalSince(again)
            #expect(took < 1, "stopped \(took) s after the second signal, not after --shutdown-timeout")
            #expect(first.log.contains("received SIGTERM again: stopping at once; what was not spoken stays in the spool"))
            #expect(!first.log.contains("spoke #1"))

            let second = try ServerProcess(pulseServer: sound.address, environment: environment)
            #expect(second.waitForLog("restored 3 announcement(s) from the spool"))
            #expect(second.waitForLog("speaking #1 "), "the cut one first, from its start")
            #expect(second.stop(signal: SIGKILL) == 128 + SIGKILL)
        }
    }
}
