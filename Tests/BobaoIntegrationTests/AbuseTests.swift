import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// One client can't hurt the others: floods, amplification, trickling, running out of descriptors,
    /// other protocols on the line port. Each against the real server.
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct AbuseTests {
        let sound: TestSoundServer.Connection

        init() throws {
            sound = try TestSoundServer.shared()
        }

        func connect(_ server: ServerProcess) throws -> LineClient {
            try LineClient(connectingTo: ListenAddress(host: "127.0.0.1", port: server.port))
        }

        /// The worst time for `client`'s lines to be answered, over `count` lines.
        func worstAckLatency(_ client: LineClient, count: Int) throws -> Double {
            var worst = 0.0
            for index in 0..<count {
                let started = Date()
                try client.send("\(index)号\n")
                let reply = client.readLine()
                #expect(reply?.hasPrefix("OK ") == true, "\(reply ?? "nil")")
                worst = max(worst, Date().timeIntervalSince(started))
            }
            return worst
        }

        @Test func floodsOfBlankLinesAnEndlessLineAndLinesBeforeAuthDoNotDelayAnotherClient() throws {
            let server = try ServerProcess(
                arguments: ["--token", "s3cret", "--queue", "1000", "--ttl", "600"], pulseServer: sound.address)
            let port = server.port
            // One authenticates and then sends blank lines as fast as it can.
            let blank = try RawClient(port: port)
            #expect(blank.sendSome(Array("AUTH s3cret\n".utf8)) == 12)
            let blanks = [UInt8](repeating: UInt8(ascii: "\n"), count: 65536)
            let blankFlood = Flood { isStopped in
                while !isStopped() { if !blank.sendBlocking(blanks) { return } }
            }
            // Another never authenticates: it sends lines and, when refused and closed, comes back.
            let lines = [UInt8](String(repeating: "新客户来了\n", count: 4000).utf8)
            let lineFlood = Flood { isStopped in
                while !isStopped() {
                    guard let client = try? RawClient(port: port) else { continue }
                    while !isStopped(), client.sendBlocking(lines) {}
                }
            }
            // A third authenticates and then sends one endless line.
            let endless = try RawClient(port: port)
            #expect(endless.sendSome(Array("AUTH s3cret\n".utf8)) == 12)
            let letters = [UInt8](repeating: UInt8(ascii: "x"), count: 65536)
            let endlessFlood = Flood { isStopped in
                while !isStopped() { if !endless.sendBlocking(letters) { return } }
            }
            defer {
                blankFlood.stop()
                lineFlood.stop()
                endlessFlood.stop()
            }
            let fourth = try connect(server)
            try fourth.send("AUTH s3cret\n")
            #expect(fourth.readLine() == "OK authenticated")
            let worst = try worstAckLatency(fourth, count: 30)
            #expect(worst < 0.1, "worst acknowledgement latency \(worst) s")
            blankFlood.stop()
            lineFlood.stop()
            endlessFlood.stop()
            #expect(server.stop() == 0)
            let refusedLogLines = server.log.split(separator: "\n").filter { $0.contains("auth-required") }
            #expect(refusedLogLines.count <= 2, "refusals from one address are logged once, then summed up")
        }

        @Test func fiveHundredNonReadingAmplifyingClientsKeepMemoryBounded() throws {
            let server = try ServerProcess(arguments: ["--no-spool"], pulseServer: sound.address)
            #expect(server.waitForLog("serving on"))
            let before = try #require(ProcessStatistics.residentBytes(of: server.pid))
            // Each two-byte line earns a ~58-byte refusal; none of them is ever read.
            let bad = [UInt8](repeating: 0, count: 65536).enumerated().map { $0.offset % 2 == 0 ? 1 : UInt8(ascii: "\n") }
            var clients: [RawClient] = []
            for _ in 0..<500 {
                let client = try RawClient(port: server.port)
                var sent = 0
                for _ in 0..<4 { sent += client.sendSome(bad) ?? 0 }
                #expect(sent > 0)
                clients.append(client)
            }
            // Everyone got served up to their caps; the server still answers a newcomer at once.
            #expect(try server.exchange("好\n") == ["OK 1"])
            let peak = try #require(ProcessStatistics.residentBytes(of: server.pid))
            #expect(peak < 64 << 20, "RSS \(peak >> 20) MB with 500 amplifying clients (was \(before >> 20) MB)")
            clients.removeAll()
            // Once they are gone, the memory they held goes back.
            // About 20 are Bobao's own: the listener, the spool, and two sound server connections (the player's
            // and the ducker's, each with its main loop's wake-up pipe and shared-memory eventfds).
            #expect(server.waitFor(timeout: 10) { _ in
                ProcessStatistics.openDescriptors(of: server.pid) < 40
            })
            #expect(try server.exchange("好\n") == ["OK 2"])
            let after = try #require(ProcessStatistics.residentBytes(of: server.pid))
            #expect(after < before + (16 << 20), "RSS \(after >> 20) MB after they left (was \(before >> 20), peak \(peak >> 20))")
            #expect(server.stop() == 0)
        }

        @Test func tricklingClientsWithoutTheTokenCannotHoldTheConnectionSlots() throws {
            let server = try ServerProcess(
                arguments: ["--token", "s3cret", "--max-connections", "8"], pulseServer: sound.address)
            let started = Date()
            let tricklers = try (0..<8).map { _ in try RawClient(port: server.port) }
            let trickle = Flood { isStopped in
                while !isStopped() {
                    for client in tricklers { _ = client.sendSome([UInt8(ascii: "A")]) }
                    Thread.sleep(forTimeInterval: 0.5)  // the attack itself: a byte every half second
                }
            }
            defer { trickle.stop() }
            let turnedAway = try connect(server)
            #expect(turnedAway.readLine()?.hasPrefix("ERR busy") == true)
            // The auth window counts from accept, whatever they send.
            for client in tricklers {
                let reply = String(decoding: client.readAll(timeout: 10), as: UTF8.self)
                #expect(reply == "ERR auth-timeout no AUTH <token> within 5 s of connecting\n")
            }
            #expect(Date().timeIntervalSince(started) < 8)
            let welcome = try connect(server)
            try welcome.send("AUTH s3cret\n好\n")
            #expect(welcome.readLine() == "OK authenticated")
            #expect(welcome.readLine() == "OK 1")
            trickle.stop()
            #expect(server.stop() == 0)
        }

        @Test func runningOutOfDescriptorsBacksOffAndServiceResumes() throws {
            let server = try ServerProcess(
                arguments: ["--no-spool"], pulseServer: sound.address, launcher: ["prlimit", "--nofile=64:64", "--"])
            #expect(server.waitForLog("keep-alive stream open"))
            var clients = try (0..<80).map { _ in try RawClient(port: server.port) }
            #expect(server.waitForLog("cannot accept connections"))
            let cpuBefore = try #require(ProcessStatistics.cpuSeconds(of: server.pid))
            let wallBefore = Date()
            Thread.sleep(forTimeInterval: 2)  // measuring CPU over an interval
            let cpu = try #require(ProcessStatistics.cpuSeconds(of: server.pid)) - cpuBefore
            let share = cpu / Date().timeIntervalSince(wallBefore)
            #expect(share < 0.1, "CPU \(Int(share * 100)) % of a core while out of descriptors")
            clients.removeAll()
            let reply = try server.exchange("好\n")
            #expect(reply == ["OK 1"])
            #expect(server.stop() == 0)
            let logged = server.log.split(separator: "\n").filter { $0.contains("cannot accept connections") }
            #expect(logged.count <= 2, "logged once, then summed up: \(logged)")
        }

        @Test func anHTTPRequestGetsA400AndNothingIsSpoken() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let server = try ServerProcess(pulseServer: sound.address)
            #expect(server.waitForLog("keep-alive stream open"))
            let curl = try runProgram(
                "curl", ["-sS", "-i", "--max-time", "5", "-d", "新客户来了", "http://127.0.0.1:\(server.port)/"])
            let response = String(decoding: curl.stdout, as: UTF8.self)
            #expect(response.hasPrefix("HTTP/1.1 400 Bad Request"), "\(response)")
            #expect(response.contains("line port"))
            #expect(server.waitForLog("spoke HTTP, not the line protocol"))
            // Nothing was accepted, so nothing can be heard: a line sent now is the first thing spoken.
            #expect(try server.exchange("欢迎光临\n") == ["OK 1"])
            #expect(server.waitForLog("spoke #1"))
            #expect(!server.log.contains("accepted #2"))
            let segments = recorder.analysis.segments()
            #expect(segments.count == 1, "only the real line was heard: \(segments)")
            #expect(server.stop() == 0)
        }

        @Test func aRefusedConnectionGetsItsReplyEvenWhenItSendsAtOnce() throws {
            let server = try ServerProcess(arguments: ["--max-connections", "1"], pulseServer: sound.address)
            let held = try connect(server)
            try held.send("好\n")
            #expect(held.readLine() == "OK 1")
            // Like `echo hi | nc`: the line goes out before the refusal comes back. Closing with it unread
            // would reset the connection and lose the reply.
            for _ in 0..<20 {
                let client = try RawClient(port: server.port)
                #expect(client.sendSome(Array("hi\n".utf8)) == 3)
                let reply = String(decoding: client.readAll(timeout: 5), as: UTF8.self)
                #expect(reply == "ERR busy 1 connection is open already; try again later\n")
            }
            #expect(server.stop() == 0)
        }

        @Test func duringAStopEveryLineIsAnsweredAndNothingAnsweredIsLost() throws {
            let state = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-stop-\(UUID())").path
            let environment = ["XDG_STATE_HOME": state]
            let arguments = ["--queue", "5000", "--shutdown-timeout", "30"]
            // No sound server: everything stays queued, and the stop does not wait for speech. A slow disk
            // keeps many lines in flight, between stored and answered, when the stop comes.
            let slow = try SlowFsync.environment(milliseconds: 100, countFile: state + "-fsyncs")
            let server = try ServerProcess(
                arguments: arguments, pulseServer: "unix:/nonexistent", environment: environment.merging(slow) { $1 })
            let client = try connect(server)
            try client.send((1...2000).map { "\($0)号\n" }.joined())
            #expect(client.readLine() == "OK 1")
            server.signal(SIGTERM)
            var replies = ["OK 1"]
            while let line = client.readLine() { replies.append(line) }
            let accepted = replies.filter { $0.hasPrefix("OK ") }.map { UInt64($0.dropFirst(3))! }
            let refused = replies.filter { $0.hasPrefix("ERR shutting-down ") }
            // Each reply is an OK or a clear refusal; lines the server never got to are unanswered, which
            // means not accepted (a client may send them again).
            #expect(accepted.count + refused.count == replies.count, "\(Set(replies.map { $0.prefix(12) }))")
            #expect(accepted == Array(1...UInt64(accepted.count)), "in order, none skipped")
            #expect(server.wait() == 0)
            // Exactly what was acknowledged is in the spool for the next start: nothing stored went
            // unanswered (a client retrying it would hear it twice), nothing answered is missing.
            let next = try ServerProcess(pulseServer: "unix:/nonexistent", environment: environment)
            #expect(next.waitForLog("restored \(accepted.count) announcement(s)"), "\(next.log)")
            #expect(try next.exchange("好\n") == ["OK \(accepted.count + 1)"])
            #expect(next.stop(signal: SIGKILL) == 128 + SIGKILL)
        }

        @Test func theTokenFollowedByNULsDoesNotAuthenticate() throws {
            let server = try ServerProcess(arguments: ["--token", "s3cret"], pulseServer: sound.address)
            let client = try connect(server)
            try client.send(Array("AUTH s3cret".utf8) + [UInt8](repeating: 0, count: 256) + Array("\n好\n".utf8))
            #expect(client.readLine() == "ERR auth-failed wrong token")
            #expect(client.readLine() == nil)
            #expect(server.stop() == 0)
            #expect(!server.log.contains("accepted"))
        }

        @Test func aClientReconnectingWithAWrongTokenCannotFloodTheLog() throws {
            let server = try ServerProcess(arguments: ["--token", "s3cret"], pulseServer: sound.address)
            for _ in 0..<300 {
                let client = try connect(server)
                try client.send("AUTH nope\n")
                #expect(client.readLine() == "ERR auth-failed wrong token")
            }
            #expect(server.stop() == 0)
            let lines = server.log.split(separator: "\n").filter { $0.contains("auth-failed") }
            #expect(lines.count == 2, "the first, then the summary at the stop: \(lines)")
        }

        @Test func loopbackClientsAreNotRateLimitedByDefault() throws {
            let server = try ServerProcess(arguments: ["--queue", "100"], pulseServer: sound.address)
            let lines = (1...50).map { "\($0)号\n" }.joined()
            let say = try BobaoBinary.run(["say", "--to", server.address], input: Data(lines.utf8))
            #expect(say.status == 0, "\(say.stderr)")
            #expect(say.stdoutText.split(separator: "\n").count == 50)
            #expect(!say.stdoutText.contains("ERR"))
            #expect(server.stop() == 0)
        }
    }
}
