import BobaoTestSupport
import Foundation
import Testing


extension SoundSuites {
    /// Each test's server speaks into a PulseAudio of this suite's own, away from the suites that record.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct SayCommandTests {
        let sound: PrivatePulseServer

        init() throws {
            sound = try PrivatePulseServer(sinkName: "say_tests")
        }

        @Test func sendsArgumentsAsOneAnnouncementAndPrintsTheReply() throws {
            let server = try ServerProcess(pulseServer: sound.address)
            let result = try BobaoBinary.run(["say", "--to", server.address, "新客户", "来了"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdoutText == "OK 1\n")
            #expect(server.waitForLog("accepted #1 from 127.0.0.1:"))
            #expect(server.log.contains("\"新客户 来了\""))
            _ = server.stop()
        }

        @Test func sendsStandardInputLineByLine() throws {
            let server = try ServerProcess(pulseServer: sound.address)
            let result = try BobaoBinary.run(["say", "--to", server.address], input: Data("一号\n\n二号\n三号".utf8))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdoutText == "OK 1\nOK 2\nOK 3\n")
            _ = server.stop()
        }

        @Test func exitsNonZeroWhenALineIsRefused() throws {
            let server = try ServerProcess(arguments: ["--queue", "1"], pulseServer: sound.address)
            let result = try BobaoBinary.run(["say", "--to", server.address], input: Data("一号\n二号\n三号\n四号\n".utf8))
            #expect(result.status == 1)
            #expect(result.stdoutText.contains("ERR queue-full"))
            #expect(result.stderr.contains("refused"))
            _ = server.stop()
        }

        @Test func exitsNonZeroWhenTheServerIsUnreachable() throws {
            // A port that was just free: bind it, note it, close it.
            let probe = try ServerProcess(pulseServer: "unix:/nonexistent")
            let port = probe.port
            _ = probe.stop()
            let result = try BobaoBinary.run(["say", "--to", "127.0.0.1:\(port)", "你好"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("cannot reach a Bobao server at 127.0.0.1:\(port)"), "\(result.stderr)")
            #expect(result.stderr.contains("Connection refused"))
        }

        @Test func rejectsABadAddress() throws {
            let result = try BobaoBinary.run(["say", "--to", "nowhere:port", "你好"])
            #expect(result.status == 2)
            #expect(result.stderr.contains("not a port number"))
        }
    }
}
