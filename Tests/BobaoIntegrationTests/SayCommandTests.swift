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

/// Flag values are checked before anything connects: a bad one exits 2 with a message naming the flag and
/// what it takes (the address given is never reached: a refused connection would exit 1).
struct SayOptionTests {
    @Test(arguments: [
        (["--repeat", "9"], "--repeat must be 1 to 5 times, not '9'"),
        (["--repeat", "twice"], "--repeat must be 1 to 5 times, not 'twice'"),
        (["--repeat"], "--repeat must be 1 to 5 times, not '你好'"),  // a bare flag takes the next argument
        (["--priority", "high"], "--priority must be urgent, normal or low, not 'high'"),
        (["--rate", "20"], "--rate must be 80 to 450 words a minute"),
        (["--pitch", "100"], "--pitch must be 0 to 99, not '100'"),
        (["--volume", "150"], "--volume must be 0 to 100 percent"),
        (["--ttl", "0"], "--ttl must be 1 to 2592000 seconds"),
        (["--max-speech", "3601"], "--max-speech must be 1 to 3600 seconds"),
        (["--chime", "../bell"], "--chime must be on, off or a chime name"),
        (["--chime", "ding", "--no-chime"], "--chime and --no-chime contradict each other"),
        (["--voice", "a/b"], "--voice must be a voice name"),
        (["--id", ""], "--id must be 1 to 128 bytes"),
        (["--loud"], "unknown option --loud"),
    ])
    func badValuesAreUsageErrorsNamingTheFlag(options: [String], message: String) throws {
        let result = try BobaoBinary.run(["say", "--to", "127.0.0.1:1"] + options + ["你好"])
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func anIDNamesOneAnnouncementNotEachLineOfInput() throws {
        let result = try BobaoBinary.run(["say", "--to", "127.0.0.1:1", "--id", "k"], input: Data("一号\n".utf8))
        #expect(result.status == 2)
        #expect(result.stderr.contains("--id names one announcement"), "\(result.stderr)")
    }

    @Test(arguments: [
        ["cancel"], ["cancel", "a", "b"], ["cancel", "a", "--all"], ["skip", "now"], ["clear", "all"],
        ["status", "x"], ["status", "--to", "nowhere:port"],
    ])
    func commandsRefuseBadUsage(arguments: [String]) throws {
        let result = try BobaoBinary.run(arguments + (arguments.contains("--to") ? [] : ["--to", "127.0.0.1:1"]))
        #expect(result.status == 2, "\(result.stderr)")
    }
}
