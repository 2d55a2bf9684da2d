import BobaoCore
import Testing

/// `LineSession` on its own: bytes and times in, actions out; no sockets.
struct LineSessionTests {
    struct Harness {
        var session: LineSession
        var ledger: PeerLedger
        var now = 100.0

        init(
            token: String? = nil, loopback: Bool = true, rate: Double = 0, burst: Double = 1,
            rateLimitLoopback: Bool = false, maximumLineBytes: Int = 32, encoding: TextEncoding = .utf8,
            rules: MessageRules = MessageRules()
        ) {
            var configuration = LineSession.Configuration()
            configuration.token = token
            configuration.encoding = encoding
            configuration.messageRules = rules
            configuration.maximumLineBytes = maximumLineBytes
            configuration.authenticationSeconds = 5
            configuration.idleTimeoutSeconds = 60
            session = LineSession(
                peer: loopback ? "127.0.0.1:5000" : "192.0.2.7:5000", host: loopback ? "127.0.0.1" : "192.0.2.7",
                isLoopback: loopback, now: now, configuration: configuration)
            ledger = PeerLedger(rateLimiter: RateLimiter(perSecond: rate, burst: burst), rateLimitLoopback: rateLimitLoopback)
        }

        /// Feeds `text` and takes every action it leads to.
        mutating func send(_ text: String) -> [LineSession.Action] {
            send(Array(text.utf8))
        }

        mutating func send(_ bytes: [UInt8]) -> [LineSession.Action] {
            bytes.withUnsafeBytes { session.receive($0) }
            return drain()
        }

        mutating func end() -> [LineSession.Action] {
            session.receiveEnd()
            return drain()
        }

        mutating func drain() -> [LineSession.Action] {
            var actions: [LineSession.Action] = []
            while let action = session.next(now: now, ledger: &ledger) { actions.append(action) }
            return actions
        }
    }

    @Test func linesBecomeAnnouncementsAndTheLastLineCountsAtTheEnd() {
        var harness = Harness()
        #expect(harness.send("一号\r\n二") == [.announce(Submission(text: "一号"))])
        #expect(harness.end() == [.announce(Submission(text: "二"))])
    }

    @Test func actionsComeOneAtATimeSoTheCallerCanStopBetweenLines() {
        var harness = Harness()
        let text = "一\n二\n三\n"
        text.utf8.withContiguousStorageIfAvailable { harness.session.receive(UnsafeRawBufferPointer($0)) }
        #expect(harness.session.next(now: 100, ledger: &harness.ledger) == .announce(Submission(text: "一")))
        #expect(harness.session.bufferedByteCount == 8)  // 二 and 三 wait, unread
        #expect(harness.drain() == [.announce(Submission(text: "二")), .announce(Submission(text: "三"))])
    }

    @Test func blankLinesAreCountedNotAnsweredAndDoNotKeepAConnectionAlive() {
        var harness = Harness()
        #expect(harness.send(String(repeating: "\n", count: 1000) + " \r\n").isEmpty)
        #expect(harness.session.blankLines == 1001)
        harness.now += 61
        #expect(harness.session.tick(now: harness.now, ledger: &harness.ledger)
            == .close("ERR idle closing after 60 s without a line\n"))
        #expect(harness.session.isClosed)
        #expect(harness.send("好\n").isEmpty, "nothing is read after the close")
    }

    @Test func aLineResetsTheIdleTimer() {
        var harness = Harness()
        harness.now += 50
        #expect(harness.send("好\n") == [.announce(Submission(text: "好"))])
        harness.now += 50
        #expect(harness.session.tick(now: harness.now, ledger: &harness.ledger) == nil)
        #expect(harness.session.deadline == 210)
    }

    @Test func theAuthWindowCountsFromAcceptWhateverTheClientTrickles() {
        var harness = Harness(token: "s3cret")
        for _ in 0..<4 {
            harness.now += 1
            #expect(harness.send("A").isEmpty)  // a byte at a time, never a whole line
            #expect(harness.session.tick(now: harness.now, ledger: &harness.ledger) == nil)
        }
        harness.now = 105
        #expect(harness.session.tick(now: harness.now, ledger: &harness.ledger)
            == .close("ERR auth-timeout no AUTH <token> within 5 s of connecting\n"))
    }

    @Test func theTokenAuthenticatesAndNothingElseDoes() {
        var good = Harness(token: "s3cret")
        #expect(good.send("AUTH s3cret\n好\n") == [.reply("OK authenticated\n"), .announce(Submission(text: "好"))])
        #expect(good.session.authenticated)

        var wrong = Harness(token: "s3cret")
        #expect(wrong.send("AUTH s3cre\n好\n") == [.close("ERR auth-failed wrong token\n")])
        #expect(!wrong.session.authenticated)

        var tooLong = Harness(token: "s3cret")
        #expect(tooLong.send("AUTH " + String(repeating: "x", count: 40) + "\n")
            == [.close("ERR auth-required send AUTH <token> as the first line\n")])

        var missing = Harness(token: "s3cret")
        #expect(missing.send("好\nAUTH s3cret\n") == [.close("ERR auth-required send AUTH <token> as the first line\n")])
    }

    @Test(arguments: [0, 1, 255, 256, 257, 512])
    func theTokenFollowedByNULsIsNotTheToken(nuls: Int) {
        var harness = Harness(token: "s3cret", maximumLineBytes: 4096)
        let line = Array("AUTH s3cret".utf8) + Array(repeating: 0, count: nuls) + [UInt8(ascii: "\n")]
        let actions = harness.send(line)
        if nuls == 0 {
            #expect(actions == [.reply("OK authenticated\n")])
        } else {
            #expect(actions == [.close("ERR auth-failed wrong token\n")])
            #expect(!harness.session.authenticated)
        }
    }

    @Test func aSecondAuthIsAnsweredAgainOrEndsTheConnection() {
        var harness = Harness(token: "s3cret")
        #expect(harness.send("AUTH s3cret\nAUTH s3cret\nAUTH nope\n好\n")
            == [.reply("OK authenticated\n"), .reply("OK authenticated\n"), .close("ERR auth-failed wrong token\n")])
    }

    @Test(arguments: [
        "GET / HTTP/1.1\r\n", "POST /announce HTTP/1.0\r\n", "get / http/1.1\r\n", "PRI * HTTP/2.0\r\n",
        "GET /\r\n", "M-SEARCH * HTTP/1.1\r\n",
    ])
    func anHTTPRequestIsAnsweredWith400AndNothingIsAnnounced(request: String) {
        var harness = Harness(token: "s3cret")
        let actions = harness.send(request + "Host: x\r\nUser-Agent: curl\r\n\r\n新客户来了")
        #expect(actions.count == 1)
        guard case .close(let text?) = actions.first else { Issue.record("\(actions)"); return }
        #expect(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(text.contains("Bobao's line port"))
        #expect(harness.end().isEmpty)
    }

    @Test func anHTTPRequestLineTooLongToFrameIsStillRecognised() {
        var harness = Harness()
        let actions = harness.send("POST /" + String(repeating: "a", count: 100) + " HTTP/1.1\r\nHost: x\r\n\r\n新客户来了")
        #expect(actions.count == 1)
        guard case .close(let text?) = actions.first else { Issue.record("\(actions)"); return }
        #expect(text.hasPrefix("HTTP/1.1 400 "))
        var leadingSpace = Harness()
        #expect(leadingSpace.send("\r\n GET / HTTP/1.1\r\nHost: x\r\n\r\n").first.map {
            if case .close(let text?) = $0 { text.hasPrefix("HTTP/1.1 400 ") } else { false }
        } == true)
        // A long first line that is not a request is refused as too long, and the session goes on.
        var long = Harness()
        #expect(long.send(String(repeating: "好", count: 20) + "\n好\n") == [
            .reply("ERR too-long line exceeds 32 bytes; the rest of it was discarded\n"), .announce(Submission(text: "好")),
        ])
    }

    @Test func otherRequestLineProtocolsAndTLSAreClosedWithoutAWord() {
        var rtsp = Harness()
        #expect(rtsp.send("OPTIONS * RTSP/1.0\r\n\r\n") == [.close(nil)])
        var ssh = Harness()
        #expect(ssh.send("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n") == [.close(nil)])
        var lowerSSH = Harness()
        #expect(lowerSSH.send("ssh-1.99-x\n") == [.close(nil)])
        var tls = Harness()
        #expect(tls.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03]) == [.close(nil)])
        // Only the first line is looked at: a later line of that shape is an announcement.
        var later = Harness()
        #expect(later.send("好\nGET / HTTP/1.1\n") == [.announce(Submission(text: "好")), .announce(Submission(text: "GET / HTTP/1.1"))])
    }

    @Test func badLinesAreRefusedAndTheConnectionGoesOn() {
        var harness = Harness()
        let actions = harness.send([0xFF, 0xFE, 0x0A] + Array("a\u{1}b\n".utf8) + Array(repeating: 0x41, count: 40) + [0x0A] + Array("好\n".utf8))
        #expect(actions == [
            .reply("ERR bad-utf8 line is not valid UTF-8\n"),
            .reply("ERR bad-text line holds NUL or other control characters\n"),
            .reply("ERR too-long line exceeds 32 bytes; the rest of it was discarded\n"),
            .announce(Submission(text: "好")),
        ])
        // C1 controls are control characters too.
        #expect(harness.send("a\u{85}b\n") == [.reply("ERR bad-text line holds NUL or other control characters\n")])
    }

    @Test func loopbackIsExemptFromTheRateLimitUnlessAskedOtherwise() {
        var loopback = Harness(loopback: true, rate: 1, burst: 2)
        #expect(loopback.send((1...50).map { "\($0)号\n" }.joined()).count == 50)
        #expect(loopback.ledger.takeLog().isEmpty)

        var included = Harness(loopback: true, rate: 1, burst: 2, rateLimitLoopback: true)
        let actions = included.send("一\n二\n三\n")
        #expect(actions.prefix(2) == [.announce(Submission(text: "一")), .announce(Submission(text: "二"))])
        #expect(actions.last == .reply("ERR rate-limited more than 1 line a second from this address\n"))

        var remote = Harness(loopback: false, rate: 1, burst: 2)
        #expect(remote.send("一\n二\n三\n").last == .reply("ERR rate-limited more than 1 line a second from this address\n"))
    }
}

/// The per-address ledger: refusals logged once per address and window, then summed up.
struct PeerLedgerTests {
    @Test func aClientReconnectingForEveryBadLineLogsOnceAndThenASummary() {
        var ledger = PeerLedger(rateLimiter: RateLimiter(perSecond: 0, burst: 1), summaryInterval: 60)
        for port in 0..<1000 {
            ledger.refused(.authFailed, what: "a connection", peer: "192.0.2.7:\(port)", host: "192.0.2.7", now: 10 + Double(port) / 100)
        }
        #expect(ledger.takeLog() == ["refused a connection from 192.0.2.7:0: auth-failed (wrong token)"])
        ledger.flushSummaries(now: 30)
        #expect(ledger.takeLog().isEmpty, "the window is still open")
        ledger.flushSummaries(now: 71)
        #expect(ledger.takeLog() == ["refused from 192.0.2.7, not logged one by one: 999 more auth-failed"])
        #expect(ledger.trackedAddresses == 0)
    }

    @Test func theNumberOfTrackedAddressesIsBounded() {
        var ledger = PeerLedger(rateLimiter: RateLimiter(perSecond: 0, burst: 1), summaryInterval: 60, maximumTrackedAddresses: 10)
        for index in 0..<100 {
            ledger.refused(.forbidden, what: "a connection", peer: "10.0.0.\(index):1", host: "10.0.0.\(index)", now: 1)
        }
        #expect(ledger.trackedAddresses == 10)
        #expect(ledger.takeLog().count == 10)
        ledger.flushSummaries(now: 62)
        #expect(ledger.takeLog() == ["refused from other addresses (more than 10 at once), not logged one by one: 90 forbidden"])
    }
}

struct SecretComparisonTests {
    @Test func onlyTheExactSecretMatches() {
        #expect(SecretComparison.matches("abc", "abc"))
        #expect(!SecretComparison.matches("abd", "abc"))
        #expect(!SecretComparison.matches("ab", "abc"))
        #expect(!SecretComparison.matches("abc" + String(repeating: "\0", count: 256), "abc"))
        #expect(!SecretComparison.matches("", "abc"))
    }
}
