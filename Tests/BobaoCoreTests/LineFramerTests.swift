import BobaoCore
import Testing

struct LineFramerTests {
    func lines(_ chunks: [String], limit: Int = 4096) -> [LineFramer.Item] {
        var framer = LineFramer(maximumLineBytes: limit)
        var items: [LineFramer.Item] = []
        for chunk in chunks { items += framer.push(Array(chunk.utf8)) }
        return items + framer.finish()
    }

    func line(_ text: String) -> LineFramer.Item { .line(Array(text.utf8)) }

    @Test func splitsOnLFAndCRLF() {
        #expect(lines(["a\nb\r\nc\n"]) == [line("a"), line("b"), line("c")])
    }

    @Test func lastLineWithoutNewlineCountsAtTheEnd() {
        #expect(lines(["a\nb"]) == [line("a"), line("b")])
        #expect(lines(["a\n"]) == [line("a")])
    }

    @Test func linesMayArriveInPieces() {
        #expect(lines(["新客", "户来", "了\r", "\n好"]) == [line("新客户来了"), line("好")])
    }

    @Test func blankLinesAreStillLines() {
        // The protocol layer ignores them; the framer reports what arrived.
        #expect(lines(["\n\r\n"]) == [line(""), line("")])
    }

    @Test func aTooLongLineIsReportedOnceAndTheRestDiscarded() {
        let long = String(repeating: "x", count: 20)
        #expect(lines([long + "\nok\n"], limit: 16) == [.tooLong, line("ok")])
        #expect(lines([long, long, "\nok"], limit: 16) == [.tooLong, line("ok")])
        #expect(lines([long], limit: 16) == [.tooLong])
    }

    @Test func aLineOfExactlyTheLimitPassesWithOrWithoutCR() {
        let exact = String(repeating: "y", count: 16)
        #expect(lines([exact + "\n", exact + "\r\n"], limit: 16) == [line(exact), line(exact)])
        #expect(lines([exact + "z\n"], limit: 16) == [.tooLong])
    }
}

struct LineProtocolTests {
    @Test(arguments: [
        ("新客户来了", LineProtocol.Request.announce("新客户来了")),
        ("  欢迎光临\t ", .announce("欢迎光临")),
        ("\u{3000}请稍等\u{3000}", .announce("请稍等")),
        ("", .blank),
        ("   \t", .blank),
        ("a\u{0}b", .invalid(.controlCharacters)),
        ("a\u{1B}[31mb", .invalid(.controlCharacters)),
        ("tab\tinside", .announce("tab\tinside")),
    ])
    func parsesLines(text: String, expected: LineProtocol.Request) {
        #expect(LineProtocol.parse(Array(text.utf8)) == expected)
    }

    @Test func invalidUTF8IsNamed() {
        #expect(LineProtocol.parse([0x61, 0xFF, 0x62]) == .invalid(.badUTF8))
        #expect(LineProtocol.parse([0xE6, 0x96]) == .invalid(.badUTF8))  // a cut multi-byte character
    }

    @Test func repliesAreOneLineEach() {
        #expect(LineProtocol.ok(id: 42) == "OK 42\n")
        #expect(LineProtocol.error(.queueFull(capacity: 256)) == "ERR queue-full 256 announcements are already waiting; try again later\n")
        #expect(LineProtocol.error(.tooLong(limit: 4096)).hasPrefix("ERR too-long line exceeds 4096 bytes"))
    }
}

struct AnnouncementQueueTests {
    @Test func firstInFirstOutWithRisingIDs() throws {
        var queue = AnnouncementQueue(capacity: 4)
        let a = try queue.enqueue("a"), b = try queue.enqueue("b")
        #expect((a.id, b.id) == (1, 2))
        #expect(queue.dequeue()?.text == "a")
        #expect(queue.dequeue()?.text == "b")
        #expect(queue.dequeue() == nil)
    }

    @Test func refusesWhenFullNeverDrops() throws {
        var queue = AnnouncementQueue(capacity: 2)
        _ = try queue.enqueue("a")
        _ = try queue.enqueue("b")
        #expect(throws: AnnouncementQueue.Refusal.full(capacity: 2)) { _ = try queue.enqueue("c") }
        #expect(queue.waiting.map(\.text) == ["a", "b"])
        _ = queue.dequeue()
        #expect(try queue.enqueue("d").id == 3)
    }

    @Test func aRequeuedAnnouncementComesNext() throws {
        var queue = AnnouncementQueue(capacity: 8)
        for text in ["a", "b", "c"] { _ = try queue.enqueue(text) }
        let first = queue.dequeue()
        let cut = try #require(first)
        queue.requeueFirst(cut)
        #expect(queue.waiting.map(\.text) == ["a", "b", "c"])
    }

    @Test func keepsOrderOverManyRounds() throws {
        var queue = AnnouncementQueue(capacity: 100)
        var expected: UInt64 = 1
        for round in 0..<50 {
            for _ in 0..<(round % 7 + 1) { _ = try queue.enqueue("x") }
            while let next = queue.dequeue() {
                #expect(next.id == expected)
                expected += 1
            }
        }
    }
}

struct ListenAddressTests {
    @Test(arguments: [
        ("127.0.0.1:7777", "127.0.0.1", 7777),
        ("0.0.0.0:0", "0.0.0.0", 0),
        ("[::1]:8000", "::1", 8000),
        ("[::1]", "::1", 7777),
        ("localhost", "localhost", 7777),
        (":9000", "127.0.0.1", 9000),
        ("7790", "127.0.0.1", 7790),
        ("counter.local:7777", "counter.local", 7777),
        ("[fe80::1%eth0]:80", "fe80::1%eth0", 80),
    ] as [(String, String, Int)])
    func parses(text: String, host: String, port: Int) throws {
        let address = try ListenAddress(parsing: text)
        #expect(address.host == host && Int(address.port) == port)
    }

    @Test(arguments: ["127.0.0.1:99999", "host:port", "::1:80", "[::1", "70000", "", "a b:1", "[::1]x"])
    func rejects(text: String) {
        #expect(throws: ListenAddress.Invalid.self) { try ListenAddress(parsing: text) }
    }
}

struct RateLimiterTests {
    @Test func allowsABurstThenTheSustainedRate() {
        var limiter = RateLimiter(perSecond: 2, burst: 3)
        var first: [Bool] = []
        for _ in 0..<5 { first.append(limiter.allow("a", now: 0)) }
        #expect(first == [true, true, true, false, false])
        let afterHalfSecond = limiter.allow("a", now: 0.5)  // one token back
        let again = limiter.allow("a", now: 0.5)
        let otherPeer = limiter.allow("b", now: 0.5)
        #expect(afterHalfSecond && !again)
        #expect(otherPeer, "another peer has its own bucket")
    }

    @Test func zeroMeansNoLimit() {
        var limiter = RateLimiter(perSecond: 0, burst: 1)
        var allowed = 0
        for _ in 0..<100 where limiter.allow("a", now: 0) { allowed += 1 }
        #expect(allowed == 100)
    }
}
