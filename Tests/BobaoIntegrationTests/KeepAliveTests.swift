import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing


extension SoundSuites {
    /// The keep-alive and the sound server's comings and goings, each against a PulseAudio of the test's own.
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct KeepAliveTests {
        /// Polls the sink state (PulseAudio announces state changes only to subscribers; a short poll with a
        /// deadline is the plain way to read it) until it is `state`.
        func waitForSinkState(_ state: String, on server: PrivatePulseServer, timeout: Double) throws -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if try server.sinkState() == state { return true }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return try server.sinkState() == state
        }

        @Test func sinkStaysRunningWhileBobaoIdlesAndSuspendsAfterItExits() throws {
            let pulse = try PrivatePulseServer(
                sinkName: "suspending", extraConfiguration: ["load-module module-suspend-on-idle timeout=1"])
            // Without a client the sink suspends after one idle second: the module works.
            #expect(try waitForSinkState("SUSPENDED", on: pulse, timeout: 5))

            let bobao = try ServerProcess(pulseServer: pulse.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            #expect(try waitForSinkState("RUNNING", on: pulse, timeout: 5))
            // Idle for three seconds, three times the suspend timeout: the silence loop keeps it running.
            for _ in 0..<6 {
                Thread.sleep(forTimeInterval: 0.5)
                #expect(try pulse.sinkState() == "RUNNING")
            }
            #expect(bobao.stop() == 0)
            #expect(try waitForSinkState("SUSPENDED", on: pulse, timeout: 5))
        }

        @Test func waitsForASoundServerThatIsNotThereAtStart() throws {
            let pulse = try PrivatePulseServer(sinkName: "late")
            pulse.stop()
            let bobao = try ServerProcess(pulseServer: pulse.address)
            #expect(bobao.waitForLog("sound server unavailable"))
            // Lines are accepted meanwhile.
            let client = try LineClient(connectingTo: ListenAddress(host: "127.0.0.1", port: bobao.port))
            try client.send("欢迎光临\n")
            client.finishSending()
            #expect(client.readLine() == "OK 1")
            #expect(bobao.waitForLog("retrying in 400 ms"), "backoff grows")

            try pulse.start()
            let recorder = try MonitorRecorder(address: pulse.address, sinkName: "late")
            #expect(bobao.waitForLog("keep-alive stream open", timeout: 10))
            #expect(recorder.waitUntil(timeout: 15) { samples in
                SignalAnalysis(samples, sampleRate: recorder.sampleRate).segments().count == 1
            }, "the waiting announcement is spoken once the server is there")
            #expect(bobao.waitForLog("spoke #1"))
            #expect(bobao.stop() == 0)
        }

        @Test func aSoundServerKilledMidSpeechIsRejoinedAndTheCutAnnouncementSaidAgain() throws {
            let pulse = try PrivatePulseServer(sinkName: "restarting")
            let firstRecorder = try MonitorRecorder(address: pulse.address, sinkName: "restarting")
            let bobao = try ServerProcess(pulseServer: pulse.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            let client = try LineClient(connectingTo: ListenAddress(host: "127.0.0.1", port: bobao.port))
            try client.send("请保管好您的随身物品，祝您生活愉快\n欢迎光临\n")
            #expect(client.readLine() == "OK 1")
            #expect(client.readLine() == "OK 2")
            #expect(firstRecorder.waitUntil(timeout: 10) { SignalAnalysis($0, sampleRate: 22050).firstLoudSample() != nil })

            pulse.stop(signal: SIGKILL)
            #expect(bobao.waitForLog("sound server unavailable"))
            // Lines are accepted while it is down.
            try client.send("三号\n")
            #expect(client.readLine() == "OK 3")

            try pulse.start()
            let recorder = try MonitorRecorder(address: pulse.address, sinkName: "restarting")
            #expect(bobao.waitForLog("keep-alive stream reopened", timeout: 10))
            #expect(bobao.waitForLog("spoke #3", timeout: 30))
            let log = bobao.log
            #expect(log.contains("#1 was cut by a sound-server failure; it will be said again from its start"))
            // #1 again from its start, then #2 and #3, in order.
            let order = ["speaking #1", "speaking #1", "speaking #2", "speaking #3"].map { log.range(of: $0) != nil }
            #expect(order.allSatisfy { $0 })
            let secondOne = try #require(log.range(of: "speaking #1", range: log.range(of: "speaking #1")!.upperBound..<log.endIndex))
            let two = try #require(log.range(of: "speaking #2"))
            #expect(secondOne.lowerBound < two.lowerBound)
            recorder.record(seconds: 0.5)
            #expect(recorder.analysis.segments().count >= 3, "\(recorder.analysis.segments())")
            #expect(bobao.stop() == 0)
        }

        @Test func sigtermWithoutASoundServerStillExitsPromptly() throws {
            let pulse = try PrivatePulseServer(sinkName: "absent")
            pulse.stop()
            let bobao = try ServerProcess(pulseServer: pulse.address)
            let client = try LineClient(connectingTo: ListenAddress(host: "127.0.0.1", port: bobao.port))
            try client.send("欢迎光临\n")
            client.finishSending()
            #expect(client.readLine() == "OK 1")
            #expect(bobao.stop(timeout: 10) == 0)
            #expect(bobao.log.contains("not spoken"))
        }
    }

    @Suite(.timeLimit(.minutes(1)))
    struct SinkSelectionTests {
        @Test func anUnknownSinkIsNamedInTheLogWithTheSinksThereAre() throws {
            let pulse = try PrivatePulseServer(sinkName: "real_sink")
            let bobao = try ServerProcess(arguments: ["--sink", "no_such_sink"], pulseServer: pulse.address)
            #expect(bobao.waitForLog("no sink 'no_such_sink' (sinks: real_sink): lines are still accepted"))
            #expect(!bobao.log.contains("retrying"), "it waits for the sink, it does not retry: \(bobao.log)")
            #expect(bobao.stop(timeout: 10) == 0)
        }

        @Test func aNamedSinkIsUsed() throws {
            let pulse = try PrivatePulseServer(sinkName: "first", extraConfiguration: [
                "load-module module-null-sink sink_name=second", "set-default-sink first",
            ])
            let bobao = try ServerProcess(arguments: ["--sink", "second"], pulseServer: pulse.address)
            #expect(bobao.waitForLog("keep-alive stream open on sink second"))
            let inputs = try pulse.pactl("list", "sink-inputs")
            #expect(inputs.contains("application.name = \"Bobao\""))
            #expect(inputs.contains("media.role = \"event\""))
            #expect(bobao.stop() == 0)
        }
    }
}
