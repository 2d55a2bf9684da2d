import BobaoCore
import Testing

/// JSON lines and encodings in a `LineSession`: the same auth, rate limit and refusals as plain lines.
struct LineSessionJSONTests {
    typealias Harness = LineSessionTests.Harness

    @Test func jsonLinesBecomeSubmissionsAndCommands() {
        var harness = Harness(maximumLineBytes: 256)
        var options = MessageOptions()
        options.priority = .urgent
        options.clientID = "7"
        #expect(harness.send(#"{"text": "一号请取餐", "priority": "urgent", "id": 7, "wait": true}"# + "\n好\n" + #"{"cmd": "skip"}"# + "\n") == [
            .announce(Submission(text: "一号请取餐", options: options, wait: true)),
            .announce(Submission(text: "好")),
            .command(.skip),
        ])
    }

    @Test func aJSONLineBeforeAuthIsRefusedLikeAPlainLine() {
        var announcement = Harness(token: "s3cret", maximumLineBytes: 256)
        #expect(announcement.send(#"{"text": "好"}"# + "\nAUTH s3cret\n")
            == [.close("ERR auth-required send AUTH <token> as the first line\n")])
        var command = Harness(token: "s3cret", maximumLineBytes: 256)
        #expect(command.send(#"{"cmd": "clear"}"# + "\n") == [.close("ERR auth-required send AUTH <token> as the first line\n")])
        var broken = Harness(token: "s3cret", maximumLineBytes: 256)
        #expect(broken.send("{oops\n") == [.close("ERR auth-required send AUTH <token> as the first line\n")])
        var after = Harness(token: "s3cret", maximumLineBytes: 256)
        #expect(after.send("AUTH s3cret\n" + #"{"cmd": "status"}"# + "\n") == [.reply("OK authenticated\n"), .command(.status)])
    }

    @Test func theVolumeCommandNeedsAuthAndCountsAgainstTheRateLikeSkip() {
        var before = Harness(token: "s3cret", maximumLineBytes: 256)
        #expect(before.send(#"{"cmd": "volume", "value": 70}"# + "\n")
            == [.close("ERR auth-required send AUTH <token> as the first line\n")])
        var after = Harness(token: "s3cret", maximumLineBytes: 256)
        #expect(after.send("AUTH s3cret\n" + #"{"cmd": "volume", "value": 70}"# + "\n" + #"{"cmd": "volume"}"# + "\n")
            == [.reply("OK authenticated\n"), .command(.volume(70)), .command(.volume(nil))])
        var limited = Harness(loopback: false, rate: 1, burst: 1, maximumLineBytes: 256)
        #expect(limited.send(#"{"cmd": "volume", "value": 70}"# + "\n" + #"{"cmd": "volume", "value": 0}"# + "\n") == [
            .command(.volume(70)),
            .reply("ERR rate-limited more than 1 line a second from this address\n"),
        ])
        // A refused value leaves the connection usable.
        var refused = Harness(maximumLineBytes: 256)
        #expect(refused.send(#"{"cmd": "volume", "value": "loud"}"# + "\n" + #"{"cmd": "volume"}"# + "\n") == [
            .reply("ERR bad-field value must be a whole number from 0 to 100\n"),
            .command(.volume(nil)),
        ])
    }

    @Test func jsonLinesAndCommandsAreRateLimited() {
        var harness = Harness(loopback: false, rate: 1, burst: 2, maximumLineBytes: 256)
        let actions = harness.send(#"{"text": "一"}"# + "\n" + #"{"cmd": "skip"}"# + "\n" + #"{"text": "三"}"# + "\n" + #"{"cmd": "skip"}"# + "\n")
        #expect(actions == [
            .announce(Submission(text: "一")),
            .command(.skip),
            .reply("ERR rate-limited more than 1 line a second from this address\n"),
            .reply("ERR rate-limited more than 1 line a second from this address\n"),
        ])
        #expect(harness.ledger.takeLog() == ["refused a line from 192.0.2.7:5000: rate-limited (more than 1 line a second from this address)"])
    }

    @Test func badJSONIsRefusedNotSpokenAndTheConnectionGoesOn() {
        var harness = Harness(maximumLineBytes: 256, rules: MessageRules(chimes: ["ding"]))
        #expect(harness.send("{oops\n" + #"{"text": "a", "chime": "bell"}"# + "\n {x}\n好 {x}\n") == [
            .reply(#"ERR bad-json not valid JSON at character 2 (near "oops")"# + "\n"),
            .reply(#"ERR bad-field chime no chime named "bell" (have: ding)"# + "\n"),
            .reply(#"ERR bad-json not valid JSON at character 3 (near "x}")"# + "\n"),
            .announce(Submission(text: "好 {x}")),
        ])
        #expect(!harness.session.isClosed)
    }

    @Test func aGBKSessionReadsGBK() {
        var harness = Harness(token: "s3cret", maximumLineBytes: 256, encoding: .gbk)
        let line = Array(#"{"text": ""#.utf8) + TextEncodingTests.newCustomerGBK + Array("\"}\n".utf8)
        #expect(harness.send(Array("AUTH s3cret\n".utf8) + TextEncodingTests.newCustomerGBK + [0x0A] + line) == [
            .reply("OK authenticated\n"),
            .announce(Submission(text: "新客户来了")),
            .announce(Submission(text: "新客户来了")),
        ])
        #expect(harness.send([0xC0, 0xB4, 0x81, 0x0A, 0xBA, 0xC3, 0x0A]) == [
            .reply("ERR bad-encoding line is not valid GBK\n"),
            .announce(Submission(text: "好")),
        ])
    }

    @Test func aUTF8SessionStillRefusesGBK() {
        var harness = Harness(maximumLineBytes: 256)
        #expect(harness.send(TextEncodingTests.newCustomerGBK + [0x0A]) == [.reply("ERR bad-utf8 line is not valid UTF-8\n")])
    }
}
