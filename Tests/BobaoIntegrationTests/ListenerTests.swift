import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Synchronization
import Testing


extension SoundSuites {
    /// The TCP side under many, slow and careless clients. The server speaks into a PulseAudio of this
    /// suite's own, so the suites that record the shared sink hear nothing of it.
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct ListenerTests {
        let sound: PrivatePulseServer

        init() throws {
            sound = try PrivatePulseServer(sinkName: "listener_tests")
            raiseDescriptorLimit()
        }

        func connect(_ server: ServerProcess) throws -> LineClient {
            try LineClient(connectingTo: ListenAddress(host: "127.0.0.1", port: server.port))
        }

        @Test func holdsAThousandOpenConnectionsAndAnswersEveryOne() throws {
            let server = try ServerProcess(arguments: ["--queue", "1000", "--line-rate", "0", "--max-connections", "1100"], pulseServer: sound.address)
            let clients = try (0..<1000).map { _ in try connect(server) }
            // All are open at once; now each sends its line, the last first.
            for (index, client) in clients.enumerated().reversed() {
                try client.send("\(index)号\n")
            }
            var ids: Set<String> = []
            for client in clients {
                let reply = try #require(client.readLine())
                #expect(reply.hasPrefix("OK "), "\(reply)")
                ids.insert(reply)
            }
            #expect(ids.count == 1000)
            #expect(server.stop() == 0)
        }

        @Test func aClientThatNeverReadsItsRepliesStallsNobody() throws {
            let server = try ServerProcess(pulseServer: sound.address)
            let careless = try connect(server)
            // Lines that are refused produce a reply each; this client sends many and reads none. Its own
            // sends will block once the server stops reading from it; that happens on another thread.
            let flood = [UInt8](String(repeating: "\u{1}\n", count: 200_000).utf8)
            let sending = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                sending.signal()
                try? careless.send(flood)
            }
            sending.wait()
            #expect(server.waitForLog("refused a line from", timeout: 10))
            // Meanwhile another client is answered at once, many times over.
            let other = try connect(server)
            for round in 1...20 {
                try other.send("\(round)号\n")
                #expect(other.readLine() == "OK \(round)")
            }
            #expect(server.stop() == 0)
        }

        @Test func netcatAsUsersRunIt() throws {
            let server = try ServerProcess(pulseServer: sound.address)
            let printf = try runProgram("sh", ["-c", "printf 'a\\nb' | nc -q1 127.0.0.1 \(server.port)"])
            #expect(printf.stdoutText == "OK 1\nOK 2\n", "\(printf.stdoutText) \(printf.stderr)")
            let echo = try runProgram("sh", ["-c", "echo 新客户来了 | nc -q1 127.0.0.1 \(server.port)"])
            #expect(echo.stdoutText == "OK 3\n")
            #expect(server.log.contains("accepted #3 from 127.0.0.1:") && server.log.contains("\"新客户来了\""))
            #expect(server.stop() == 0)
        }

        @Test func badLinesAreAnsweredAndTheConnectionGoesOn() throws {
            let server = try ServerProcess(arguments: ["--max-line", "64"], pulseServer: sound.address)
            let client = try connect(server)
            try client.send([0x61, 0xFF, 0x0A])  // invalid UTF-8
            try client.send(Array((String(repeating: "长", count: 40) + "\n").utf8))  // 120 bytes
            try client.send("a\u{0}b\n")
            try client.send("好\n")
            client.finishSending()
            #expect(client.readLine()?.hasPrefix("ERR bad-utf8 ") == true)
            #expect(client.readLine() == "ERR too-long line exceeds 64 bytes; the rest of it was discarded")
            #expect(client.readLine()?.hasPrefix("ERR bad-text ") == true)
            #expect(client.readLine() == "OK 1")
            #expect(client.readLine() == nil)
            #expect(server.stop() == 0)
        }

        @Test func refusesToStartOnAnAddressInUse() throws {
            let first = try ServerProcess(pulseServer: sound.address)
            let second = try BobaoBinary.run(["serve", "--listen", first.address], environment: ["PULSE_SERVER": sound.address])
            #expect(second.status == 1)
            #expect(second.stderr.contains("cannot listen on \(first.address)"), "\(second.stderr)")
            #expect(second.stderr.contains("Address already in use"))
            #expect(first.stop() == 0)
        }
    }
}
