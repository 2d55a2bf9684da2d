import BobaoCore
import Testing

/// How an HTTP body and query become an announcement or a command, with the line protocol's checks.
struct HTTPRequestReadingTests {
    func read(_ type: String?, _ body: String, query: [(name: String, value: String)] = []) -> Result<Submission, HTTPFailure> {
        HTTPAnnouncement.read(contentType: type, body: Array(body.utf8), query: query)
    }

    @Test func plainTextIsTheTextWithLineBreaksAsSpaces() throws {
        let submission = try read("text/plain; charset=utf-8", "新客户\r\n来了\n").get()
        #expect(submission.text == "新客户 来了")
        #expect(try read(nil, "无类型").get().text == "无类型", "no Content-Type: plain UTF-8")
    }

    @Test func formFieldsAreTypedAsTheirJSON() throws {
        let submission = try read("application/x-www-form-urlencoded",
                                  "text=%E5%A5%BD+%E7%9A%84&priority=urgent&repeat=2&chime=off&id=A%2B1&ttl=30&wait=1").get()
        #expect(submission.text == "好 的")
        #expect(submission.options.priority == .urgent && submission.options.repeatCount == 2)
        #expect(submission.options.chime == .off && submission.options.clientID == "A+1")
        #expect(submission.options.ttlSeconds == 30 && submission.wait)
        #expect(try read("application/x-www-form-urlencoded", "text=x&voice=").get().options.voice == nil, "empty is not given")
    }

    @Test func aFormOfOnlyTextIsTheText() throws {
        #expect(try read("application/x-www-form-urlencoded", "取餐 12 号").get().text == "取餐 12 号")
    }

    @Test func queryFieldsJoinTheBody() throws {
        let submission = try read("text/plain", "好", query: [("priority", "low"), ("wait", "true")]).get()
        #expect(submission.options.priority == .low && submission.wait)
        #expect(try read(nil, "", query: [("text", "只在网址")]).get().text == "只在网址")
        guard case .failure(let twice) = read("application/json", #"{"text": "a", "wait": true}"#, query: [("wait", "1")]) else {
            Issue.record("a field in both is refused")
            return
        }
        #expect(twice.code == "bad-field" && twice.message.contains("twice"))
    }

    @Test(arguments: [
        ("application/json", #"{"text": 5}"#, 400, "bad-field"),
        ("application/json", #"{"text": "a""#, 400, "bad-json"),
        ("application/json", #"["a"]"#, 400, "bad-json"),
        ("application/json", #"{"cmd": "clear"}"#, 400, "bad-field"),
        ("application/json", #"{"text": "a", "colour": "red"}"#, 400, "bad-field"),
        ("text/plain", "\u{7}ring", 400, "bad-field"),
        ("text/plain", "   ", 400, "bad-field"),
        ("text/plain; charset=martian", "a", 415, "bad-encoding"),
        ("multipart/form-data; boundary=x", "--x", 415, "unsupported-media-type"),
        ("application/x-www-form-urlencoded", "text=a&repeat=twice", 400, "bad-field"),
        ("application/x-www-form-urlencoded", "text=%FF", 400, "bad-encoding"),
        ("application/x-www-form-urlencoded", "text=a&b", 400, "bad-field"),
    ])
    func refusalsNameTheProblem(type: String, body: String, status: Int, code: String) {
        guard case .failure(let failure) = read(type, body) else {
            Issue.record("\(type) \(body) was accepted")
            return
        }
        #expect(failure.status == status && failure.code == code, "\(failure)")
        #expect(failure.json.hasPrefix("{\"error\":\"\(code)\",\"message\":"))
    }

    @Test func theServersEncodingIsTheDefaultCharset() throws {
        let gbk: [UInt8] = [0xC4, 0xE3, 0xBA, 0xC3]  // 你好
        #expect(try HTTPAnnouncement.read(contentType: "text/plain", body: gbk, query: [], defaultCharset: "GBK").get().text == "你好")
        #expect(try HTTPAnnouncement.read(contentType: "text/plain; charset=utf-8", body: Array("好".utf8), query: [],
                                          defaultCharset: "GBK").get().text == "好", "a named charset wins")
    }

    @Test func otherCharsetsAreConverted() throws {
        let gbk: [UInt8] = [0xC4, 0xE3, 0xBA, 0xC3]  // 你好
        let submission = try HTTPAnnouncement.read(contentType: "text/plain; charset=\"gb2312\"", body: gbk, query: []).get()
        #expect(submission.text == "你好")
        let latin1 = try HTTPAnnouncement.read(contentType: "text/plain; charset=ISO-8859-1", body: [0x63, 0x61, 0x66, 0xE9], query: []).get()
        #expect(latin1.text == "café")
        guard case .failure(let failure) = HTTPAnnouncement.read(contentType: "text/plain", body: gbk, query: []) else {
            Issue.record("GBK bytes are not UTF-8")
            return
        }
        #expect(failure.code == "bad-encoding" && failure.message.contains("UTF-8"))
    }

    @Test func commandsReadTheirFields() throws {
        #expect(try HTTPAnnouncement.command("volume", contentType: "text/plain", body: Array(" 70\n".utf8), query: []).get()
            == .volume(70))
        #expect(try HTTPAnnouncement.command("volume", contentType: nil, body: [], query: [("value", "5")]).get() == .volume(5))
        #expect(try HTTPAnnouncement.command("cancel", contentType: "application/json", body: Array(#"{"id": 12}"#.utf8), query: []).get()
            == .cancel(.id("12")))
        #expect(try HTTPAnnouncement.command("cancel", contentType: nil, body: [], query: [("all", "1")]).get() == .cancel(.all))
        #expect(try HTTPAnnouncement.command("skip", contentType: nil, body: [], query: []).get() == .skip)
        guard case .failure(let failure) = HTTPAnnouncement.command("volume", contentType: nil, body: [], query: [("value", "300")]) else {
            Issue.record("300 % is out of range")
            return
        }
        #expect(failure.code == "bad-field" && failure.message.contains("0 to 100"))
    }

    @Test func tokensComeAsBearerOrBasic() {
        #expect(HTTPAccess.presentedToken("Bearer s3cret") == "s3cret")
        #expect(HTTPAccess.presentedToken("bearer   s3cret ") == "s3cret")
        #expect(HTTPAccess.presentedToken("Basic " + "Ym9iYW86czNjcmV0") == "s3cret", "bobao:s3cret")
        #expect(HTTPAccess.presentedToken("Basic !!!") == nil)
        #expect(HTTPAccess.presentedToken("Digest x") == nil)
        #expect(HTTPAccess.presentedToken(nil) == nil)
        #expect(Base64.decode("5aW9") == Array("好".utf8))
    }

    @Test func otherSitesAndOtherHostsAreRefused() {
        #expect(HTTPAccess.crossSiteProblem(secFetchSite: "cross-site", origin: nil, host: "127.0.0.1:8080")?.code == "cross-site")
        #expect(HTTPAccess.crossSiteProblem(secFetchSite: "same-origin", origin: "http://127.0.0.1:8080", host: "127.0.0.1:8080") == nil)
        #expect(HTTPAccess.crossSiteProblem(secFetchSite: nil, origin: "null", host: "127.0.0.1:8080")?.code == "cross-site")
        #expect(HTTPAccess.crossSiteProblem(secFetchSite: "none", origin: nil, host: nil) == nil, "typed into the address bar")
        let address: (String) -> Bool = { $0.first?.isNumber == true || $0.contains(":") }
        #expect(HTTPAccess.hostProblem("localhost:8080", isAddress: address) == nil)
        #expect(HTTPAccess.hostProblem("[::1]:8080", isAddress: address) == nil)
        #expect(HTTPAccess.hostProblem("192.168.1.50:8080", isAddress: address) == nil)
        #expect(HTTPAccess.hostProblem("counter.local:8080", isAddress: address) == nil)
        #expect(HTTPAccess.hostProblem("counter:8080", isAddress: address) == nil)
        #expect(HTTPAccess.hostProblem("kiosk-7.shop.example", ownNames: ["kiosk-7.shop.example"], isAddress: address) == nil)
        #expect(HTTPAccess.hostProblem("attacker.example:8080", isAddress: address)?.code == "bad-host")
        #expect(HTTPAccess.hostProblem("rebind.attacker.example.", isAddress: address)?.code == "bad-host")
    }

    @Test func formDecodingKeepsOrderAndOddPercents() throws {
        let fields = try #require(FormFields.decode(Array("a=1&b=x+y%21&c&d=%zz&=e".utf8)))
        #expect(fields.map(\.name) == ["a", "b", "c", "d", ""])
        #expect(fields.map(\.value) == ["1", "x y!", "", "%zz", "e"])
    }
}
