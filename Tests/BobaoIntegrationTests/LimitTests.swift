import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// Connection, idleness and rate limits: each answered clearly while the server keeps serving.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct LimitTests {
        let sound: PrivatePulseServer

        init() throws {
            sound = try PrivatePulseServer(sinkName: "limit_tests")
        }

        func connect(_ server: ServerProcess) throws -> LineClient {
            try LineClient(connectingTo: ListenAddress(host: "127.0.0.1", port: server.port))
        }

        @Test func connectionsBeyondTheLimitAreToldBusyAndClosed() throws {
            let server = try ServerProcess(arguments: ["--max-connections", "3"], pulseServer: sound.address)
            let open = try (0..<3).map { _ in try connect(server) }
            // The three are really open: each is answered.
            for (index, client) in open.enumerated() {
                try client.send("\(index)号\n")
                #expect(client.readLine()?.hasPrefix("OK ") == true)
            }
            let fourth = try connect(server)
            #expect(fourth.readLine() == "ERR busy 3 connections are open already; try again later")
            #expect(fourth.readLine() == nil)
            #expect(server.waitForLog("refused a connection from 127.0.0.1:"))
            // One leaves; a newcomer is served.
            open[0].finishSending()
            #expect(open[0].readLine() == nil)
            let fifth = try connect(server)
            try fifth.send("好\n")
            #expect(fifth.readLine()?.hasPrefix("OK ") == true)
            #expect(server.stop() == 0)
        }

        @Test func aSilentConnectionIsClosedAfterTheIdleTimeout() throws {
            let server = try ServerProcess(arguments: ["--idle-timeout", "1"], pulseServer: sound.address)
            let silent = try connect(server)
            let started = Date()
            #expect(silent.readLine() == "ERR idle closing after 1 s without a line")
            #expect(silent.readLine() == nil)
            #expect(Date().timeIntervalSince(started) < 4)
            #expect(server.waitForLog("closed 127.0.0.1:"))
            // The server goes on.
            let next = try connect(server)
            try next.send("好\n")
            #expect(next.readLine() == "OK 1")
            #expect(server.stop() == 0)
        }

        @Test func aPeerSendingTooFastIsRateLimitedAndKeepsItsConnection() throws {
            let server = try ServerProcess(arguments: ["--line-rate", "1", "--line-burst", "2", "--rate-limit-loopback"], pulseServer: sound.address)
            let client = try connect(server)
            try client.send("一号\n二号\n三号\n四号\n")
            #expect(client.readLine() == "OK 1")
            #expect(client.readLine() == "OK 2")
            #expect(client.readLine() == "ERR rate-limited more than 1 line a second from this address")
            #expect(client.readLine()?.hasPrefix("ERR rate-limited ") == true)
            #expect(server.waitForLog("refused a line from 127.0.0.1:"))
            #expect(server.stop() == 0)
        }
    }
}
