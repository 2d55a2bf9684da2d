import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// Nothing accepted is lost: kill -9, restarts, expiry and a broken spool, against a real SQLite file.
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct SpoolTests {
        let sound: PrivatePulseServer
        let state: String

        init() throws {
            sound = try PrivatePulseServer(sinkName: "spool_tests")
            state = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-spool-\(UUID())").path
        }

        @Test func announcementsQueuedWhenBobaoIsKilledAreSpokenAfterARestart() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: "spool_tests")
            let first = try ServerProcess(pulseServer: sound.address, environment: ["XDG_STATE_HOME": state])
            #expect(first.waitForLog("keep-alive stream open"))
            #expect(try first.exchange("请保管好您的随身物品\n欢迎光临\n谢谢惠顾\n") == ["OK 1", "OK 2", "OK 3"])
            #expect(recorder.waitUntil(timeout: 10) { SignalAnalysis($0, sampleRate: 22050).firstLoudSample() != nil })
            #expect(first.stop(signal: SIGKILL) == 128 + SIGKILL)
            #expect(FileManager.default.fileExists(atPath: state + "/bobao/spool.db"))

            let second = try ServerProcess(pulseServer: sound.address, environment: ["XDG_STATE_HOME": state])
            #expect(second.waitForLog("restored 3 announcement(s) from the spool"))
            #expect(second.waitForLog("spoke #3", timeout: 30))
            let log = second.log
            let order = ["speaking #1 ", "speaking #2 ", "speaking #3 "].compactMap { log.range(of: $0)?.lowerBound }
            #expect(order.count == 3 && order == order.sorted(), "spoken in their original order")
            // New announcements continue the numbering.
            #expect(try second.exchange("好\n") == ["OK 4"])
            #expect(second.waitForLog("spoke #4"))
            #expect(second.stop() == 0)

            // All spoken: a third start restores nothing.
            let third = try ServerProcess(pulseServer: sound.address, environment: ["XDG_STATE_HOME": state])
            #expect(third.waitForLog("keep-alive stream open"))
            #expect(!third.log.contains("restored"))
            #expect(third.stop() == 0)
        }

        @Test func gracefulShutdownKeepsTheRestInTheSpool() throws {
            let first = try ServerProcess(pulseServer: sound.address, environment: ["XDG_STATE_HOME": state + "-b"])
            #expect(first.waitForLog("keep-alive stream open"))
            #expect(try first.exchange("请保管好您的随身物品\n一号\n二号\n") == ["OK 1", "OK 2", "OK 3"])
            #expect(first.waitForLog("speaking #1 "))
            #expect(first.stop() == 0)
            #expect(first.log.contains("spoke #1"), "the announcement being spoken is finished")
            #expect(first.log.contains("not spoken (server stopping): #2 \"一号\"; kept in the spool for the next start"))
            let second = try ServerProcess(pulseServer: sound.address, environment: ["XDG_STATE_HOME": state + "-b"])
            #expect(second.waitForLog("restored 2 announcement(s)"))
            #expect(second.waitForLog("spoke #3", timeout: 20))
            #expect(second.stop() == 0)
        }

        @Test func theShutdownTimeoutCutsALongAnnouncementWhichIsSaidAfterTheNextStart() throws {
            let environment = ["XDG_STATE_HOME": state + "-c"]
            let first = try ServerProcess(arguments: ["--shutdown-timeout", "1"], pulseServer: sound.address, environment: environment)
            #expect(first.waitForLog("keep-alive stream open"))
            let long = String(repeating: "请保管好您的随身物品，", count: 6)
            #expect(try first.exchange(long + "\n") == ["OK 1"])
            #expect(first.waitForLog("speaking #1 "))
            let started = Date()
            #expect(first.stop() == 0)
            #expect(Date().timeIntervalSince(started) < 4, "bounded by --shutdown-timeout")
            #expect(first.log.contains("cut the current announcement after waiting 1 s"))
            #expect(!first.log.contains("spoke #1"))
            let second = try ServerProcess(pulseServer: sound.address, environment: environment)
            #expect(second.waitForLog("restored 1 announcement(s)"))
            #expect(second.waitForLog("speaking #1 "))
            #expect(second.stop(signal: SIGKILL) == 128 + SIGKILL)
        }

        @Test func anAnnouncementWhoseTTLRunsOutWithoutASoundServerFailsAndIsNotSpokenLater() throws {
            let pulse = try PrivatePulseServer(sinkName: "late_spool")
            pulse.stop()
            let bobao = try ServerProcess(arguments: ["--ttl", "1"], pulseServer: pulse.address)
            #expect(try bobao.exchange("新客户来了\n") == ["OK 1"])
            // Its TTL runs out while there is no sound server: it fails then, saying why.
            #expect(bobao.waitForLog("failed #1 \"新客户来了\": no sound server to play it on"))
            try pulse.start()
            #expect(bobao.waitForLog("keep-alive stream open"))
            #expect(try bobao.exchange("欢迎光临\n") == ["OK 2"])
            #expect(bobao.waitForLog("spoke #2"))
            #expect(!bobao.log.contains("spoke #1"))
            #expect(bobao.stop() == 0)
        }

        @Test func aCorruptSpoolIsAStartUpErrorNotAReset() throws {
            let folder = state + "-corrupt/bobao"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            try garbage.write(to: URL(fileURLWithPath: folder + "/spool.db"))
            let result = try BobaoBinary.run(
                ["serve", "--listen", "127.0.0.1:0"],
                environment: ["PULSE_SERVER": sound.address, "XDG_STATE_HOME": state + "-corrupt"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("spool \(folder)/spool.db"), "\(result.stderr)")
            #expect(result.stderr.contains("--no-spool"))
            // The file is left as it was.
            #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/spool.db")) == garbage)
        }

        @Test func twoServersCannotShareASpool() throws {
            let environment = ["XDG_STATE_HOME": state + "-shared"]
            let first = try ServerProcess(pulseServer: sound.address, environment: environment)
            let second = try BobaoBinary.run(
                ["serve", "--listen", "127.0.0.1:0"], environment: environment.merging(["PULSE_SERVER": sound.address]) { $1 })
            #expect(second.status == 1)
            #expect(second.stderr.contains("is in use by another bobao serve"), "\(second.stderr)")
            #expect(first.stop() == 0)
        }

        @Test func noSpoolKeepsNothingOnDisk() throws {
            let bobao = try ServerProcess(arguments: ["--no-spool"], pulseServer: sound.address,
                                          environment: ["XDG_STATE_HOME": state + "-none"])
            #expect(try bobao.exchange("好\n") == ["OK 1"])
            #expect(bobao.stop() == 0)
            #expect(!FileManager.default.fileExists(atPath: state + "-none/bobao/spool.db"))
        }
    }
}
