import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// Who may make the speaker talk.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct AccessTests {
        let sound: PrivatePulseServer

        init() throws {
            sound = try PrivatePulseServer(sinkName: "access_tests")
        }

        @Test(arguments: ["0.0.0.0:0", "[::]:0"])
        func refusesToListenBeyondLoopbackWithoutTokenOrAllowList(listen: String) throws {
            let result = try BobaoBinary.run(["serve", "--listen", listen], environment: ["PULSE_SERVER": sound.address])
            #expect(result.status == 2)
            #expect(result.stderr.contains("refusing to listen on"), "\(result.stderr)")
            #expect(result.stderr.contains("--token SECRET") && result.stderr.contains("--allow CIDR"))
        }

        @Test func listensBeyondLoopbackWithAnAllowList() throws {
            let server = try ServerProcess(
                arguments: ["--listen", "0.0.0.0:0", "--allow", "192.168.77.0/24"], pulseServer: sound.address)
            // Loopback is always admitted.
            let client = try LineClient(connectingTo: ListenAddress(host: "127.0.0.1", port: server.port))
            try client.send("好\n")
            #expect(client.readLine() == "OK 1")
            #expect(server.stop() == 0)
        }

        @Test func aTokenIsRequiredFirstAndNeverLogged() throws {
            let secret = "s3cret-Counter-7"
            let server = try ServerProcess(arguments: ["--token", secret], pulseServer: sound.address)
            #expect(try server.exchange("新客户来了\n好\n") == ["ERR auth-required send AUTH <token> as the first line"])
            #expect(try server.exchange("AUTH wrong\n好\n") == ["ERR auth-failed wrong token"])
            #expect(try server.exchange("AUTH \(secret)\n新客户来了\n") == ["OK authenticated", "OK 1"])

            let say = try BobaoBinary.run(["say", "--to", server.address, "--token", secret, "欢迎光临"])
            #expect(say.status == 0, "\(say.stderr)")
            #expect(say.stdoutText == "OK authenticated\nOK 2\n")
            let sayFromEnvironment = try BobaoBinary.run(
                ["say", "--to", server.address, "谢谢"], environment: ["BOBAO_TOKEN": secret])
            #expect(sayFromEnvironment.stdoutText == "OK authenticated\nOK 3\n")
            let sayWithout = try BobaoBinary.run(["say", "--to", server.address, "好"])
            #expect(sayWithout.status == 1)
            #expect(sayWithout.stdoutText.contains("ERR auth-required"))

            #expect(server.stop() == 0)
            #expect(server.log.contains("auth-failed"))
            #expect(!server.log.contains(secret), "the token must never reach the log")
            #expect(!server.log.contains("wrong\""))
        }

        @Test func anUnauthenticatedConnectionGetsOnlyAFewSeconds() throws {
            let server = try ServerProcess(arguments: ["--token", "t0ken"], pulseServer: sound.address)
            let silent = try LineClient(connectingTo: ListenAddress(host: "127.0.0.1", port: server.port))
            let started = Date()
            #expect(silent.readLine() == "ERR auth-timeout no AUTH <token> within 5 s of connecting")
            #expect(Date().timeIntervalSince(started) < 8)
            #expect(server.waitForLog("auth-timeout"))
            #expect(server.stop() == 0)
        }

        @Test func aListenerRefusesAddressesItDoesNotAdmit() throws {
            let listener = try LineListener(
                address: ListenAddress(host: "127.0.0.1", port: 0),
                ledger: PeerLedger(rateLimiter: RateLimiter(perSecond: 0, burst: 1)), admits: { _ in false },
                submit: { _, _, reply in reply(.accepted(number: 1, duplicate: false, watching: false)) })
            listener.start()
            defer { listener.stop() }
            let port = try #require(UInt16(listener.boundAddress.split(separator: ":").last!))
            let client = try LineClient(connectingTo: ListenAddress(host: "127.0.0.1", port: port))
            #expect(client.readLine() == "ERR forbidden this address may not use this server")
            #expect(client.readLine() == nil)
        }
    }
}
