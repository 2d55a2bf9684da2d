import BobaoCore
import Testing

/// JSON lines through `LineProtocol.parse`: what each field becomes, and the reply each mistake gets.
struct JSONRequestTests {
    func parse(_ line: String, rules: MessageRules = MessageRules()) -> LineProtocol.Request {
        LineProtocol.parse(Array(line.utf8), rules: rules)
    }

    /// The reply a refused line gets, or a description of what it became instead.
    func reply(_ line: String, rules: MessageRules = MessageRules()) -> String {
        guard case .invalid(let refusal) = parse(line, rules: rules) else { return "not refused: \(parse(line, rules: rules))" }
        return LineProtocol.error(refusal)
    }

    // MARK: Announcements

    @Test func everyFieldOfAnAnnouncement() {
        let line = """
            {"text": "新客户来了", "priority": "urgent", "repeat": 3, "chime": "ding", "voice": "yue", "rate": 200, \
            "pitch": 60, "volume": 80, "id": "order-7", "ttl": 30, "max_speech": 2.5, "wait": true}
            """
        var options = MessageOptions()
        options.priority = .urgent
        options.repeatCount = 3
        options.chime = .named("ding")
        options.voice = "yue"
        options.rate = 200
        options.pitch = 60
        options.volume = 80
        options.clientID = "order-7"
        options.ttlSeconds = 30
        options.maximumSpeechSeconds = 2.5
        #expect(parse(line) == .submission(Submission(text: "新客户来了", options: options, wait: true)))
        #expect(parse(line, rules: MessageRules(voices: ["zh", "yue"], chimes: ["ding"]))
            == .submission(Submission(text: "新客户来了", options: options, wait: true)))
    }

    @Test func onlyTextIsNeededAndNullLeavesAFieldUnset() {
        #expect(parse(#"{"text":"好"}"#) == .submission(Submission(text: "好")))
        #expect(parse(#"  {"text": "好", "priority": null, "voice": null, "chime": null, "id": null, "wait": null, "cmd": null}  "#)
            == .submission(Submission(text: "好")))
        #expect(parse(#"{"wait": false, "text": "好", "priority": "normal", "repeat": 1}"#) == .submission(Submission(text: "好")))
    }

    @Test func aByteOrderMarkBeforeTheLineIsNotText() {
        #expect(parse("\u{FEFF}" + #"{"text":"好"}"#) == .submission(Submission(text: "好")))
        #expect(parse("\u{FEFF}新客户来了") == .announce("新客户来了"))
        #expect(parse("\u{FEFF}AUTH secret") == .auth("secret"))
    }

    @Test func priorityNamesAreReadWhateverTheirCase() {
        var urgent = MessageOptions()
        urgent.priority = .urgent
        #expect(parse(#"{"text":"好","priority":"URGENT"}"#) == .submission(Submission(text: "好", options: urgent)))
        #expect(parse(#"{"text":"好","priority":"Urgent"}"#) == .submission(Submission(text: "好", options: urgent)))
        #expect(reply(#"{"text":"好","priority":"high"}"#) == "ERR bad-field priority must be \"urgent\", \"normal\" or \"low\"\n")
    }

    @Test func lineBreaksAndTabsInTextBecomeSpacesAndTheTextIsTrimmed() {
        #expect(parse(#"{"text": "\n 一号\r\n二号\t三号 \u3000"}"#) == .submission(Submission(text: "一号  二号 三号")))
        // An escaped backslash before u0000 is text, not a NUL.
        #expect(parse(#"{"text": "a\\u0000b"}"#) == .submission(Submission(text: #"a\u0000b"#)))
        #expect(parse(#"{"text": "\u65b0\ud83d\ude00\"\/"}"#) == .submission(Submission(text: "新😀\"/")))
    }

    @Test func wholeNumbersMayBeWrittenWithAFractionOfZero() {
        var options = MessageOptions()
        options.repeatCount = 2
        options.volume = 0
        options.rate = 100
        #expect(parse(#"{"text": "a", "repeat": 2.0, "volume": -0, "rate": 1e2}"#) == .submission(Submission(text: "a", options: options)))
    }

    @Test func chimeTrueFalseOrAName() {
        func chime(_ value: String) -> ChimeChoice? {
            guard case .submission(let submission) = parse(#"{"text": "a", "chime": \#(value)}"#) else { return nil }
            return submission.options.chime
        }
        #expect(chime("true") == .on)
        #expect(chime("false") == .off)
        #expect(chime(#""bell-2""#) == .named("bell-2"))
    }

    @Test func anIDMayBeAStringOrAWholeNumber() {
        func id(_ value: String) -> String? {
            guard case .submission(let submission) = parse(#"{"text": "a", "id": \#(value)}"#) else { return nil }
            return submission.options.clientID
        }
        #expect(id("12345") == "12345")
        #expect(id("12345.0") == "12345")
        #expect(id("-7") == "-7")
        #expect(id("9007199254740991") == "9007199254740991")
        #expect(id(#""订单 7""#) == "订单 7")
        #expect(id("\"" + String(repeating: "好", count: 42) + "\"") == String(repeating: "好", count: 42))  // 126 bytes
    }

    @Test func fractionalSeconds() {
        guard case .submission(let submission) = parse(#"{"text": "a", "ttl": 0.5, "max_speech": 3600}"#) else {
            Issue.record("refused")
            return
        }
        #expect(submission.options.ttlSeconds == 0.5)
        #expect(submission.options.maximumSpeechSeconds == 3600)
    }

    // MARK: Commands

    @Test func commands() {
        #expect(parse(#"{"cmd": "cancel", "id": "order-7"}"#) == .command(.cancel(.id("order-7"))))
        #expect(parse(#"{"id": 12345, "cmd": "cancel"}"#) == .command(.cancel(.id("12345"))))
        #expect(parse(#"{"cmd": "cancel", "all": true}"#) == .command(.cancel(.all)))
        #expect(parse(#"{"cmd": "cancel", "id": "x", "all": false}"#) == .command(.cancel(.id("x"))))
        #expect(parse(#"{"cmd": "skip"}"#) == .command(.skip))
        #expect(parse(#"{"cmd": "clear"}"#) == .command(.clear))
        #expect(parse(#"{"cmd":"status","text":null}"#) == .command(.status))
    }

    // MARK: Refusals

    @Test(arguments: [
        (#"{"text": "a" x}"#, #"ERR bad-json not valid JSON at character 14 (near "x}")"#),
        (#"{oops"#, #"ERR bad-json not valid JSON at character 2 (near "oops")"#),
        (#"{"text": "好好" , }"#, #"ERR bad-json not valid JSON at character 17 (near "}")"#),
        (#"  {"text" "a"}"#, #"ERR bad-json not valid JSON at character 11 (near "\"a\"}")"#),
        (#"{"text": "a",}"#, #"ERR bad-json not valid JSON at character 14 (near "}")"#),
        (#"{ 'text': 1}"#, #"ERR bad-json not valid JSON at character 3 (near "'text': 1}")"#),
        (#"{"text": "a", "n": [1, 2x]}"#, #"ERR bad-json not valid JSON at character 25 (near "x]}")"#),
        (#"{"text": "a", "n": {"m": 1, 2}}"#, #"ERR bad-json not valid JSON at character 29 (near "2}}")"#),
        (#"{"text": "a"}}"#, #"ERR bad-json not valid JSON at character 14 (near "}")"#),
        (#"{"text": "\u0000" x}"#, #"ERR bad-json not valid JSON at character 19 (near "x}")"#),
        (#"{"text": "\x"}"#, #"ERR bad-json not valid JSON at character 11 (near "\\x\"}")"#),
        (#"{"text": "\ud800"}"#, #"ERR bad-json not valid JSON at character 11 (near "\\ud800\"}")"#),
        (#"{"text": "a", "repeat": nan}"#, #"ERR bad-json not valid JSON at character 25 (near "nan}")"#),
        (#"{"text": "一二三四五六七八九十一二三四五"#, #"ERR bad-json not valid JSON at character 11 (near "\u4e00\u4e8c\u4e09\u56db\u4e94\u516d\u4e03\u516b\u4e5d\u5341\u4e00\u4e8c"...)"#),
        (#"{"#, "ERR bad-json not valid JSON: the line ends before the object does"),
        (#"{"text": "a", "list": [1, 2"#, "ERR bad-json not valid JSON: the line ends before the object does"),
    ])
    func invalidJSONSaysWhere(line: String, expected: String) {
        #expect(reply(line) == expected + "\n")
    }

    @Test(arguments: [
        // Unknown fields, and fields given twice.
        (#"{"text": "a", "colour": "red"}"#,
         "colour unknown field (known: text, priority, repeat, chime, voice, rate, pitch, volume, id, ttl, max_speech, wait, cmd, all, value)"),
        (#"{"Text": "a"}"#, "Text unknown field (known: text, priority, repeat, chime, voice, rate, pitch, volume, id, ttl, max_speech, wait, cmd, all, value)"),
        (#"{"颜色": 1}"#, #""\u989c\u8272" unknown field (known: text, priority, repeat, chime, voice, rate, pitch, volume, id, ttl, max_speech, wait, cmd, all, value)"#),
        (#"{"text": "a", "text": "b"}"#, "text given twice"),
        (#"{"text": "a", "id": null, "id": "b"}"#, "id given twice"),
        // Text.
        (#"{}"#, "text missing"),
        (#"{"priority": "low"}"#, "text missing"),
        (#"{"text": null}"#, "text missing"),
        (#"{"text": 5}"#, "text must be a string"),
        (#"{"text": ["a"]}"#, "text must be a string"),
        (#"{"text": " \n\t\u3000 "}"#, "text empty"),
        (#"{"text": "a\u0000b"}"#, "text holds control characters"),
        (#"{"text": "\u0000"}"#, "text holds control characters"),
        (#"{"text": "a\u0007b"}"#, "text holds control characters"),
        (#"{"text": "a\u007fb"}"#, "text holds control characters"),
        (#"{"text": "a\u0085b"}"#, "text holds control characters"),
        // Priority, repeat, wait.
        (#"{"text": "a", "priority": "high"}"#, #"priority must be "urgent", "normal" or "low""#),
        (#"{"text": "a", "priority": 1}"#, #"priority must be "urgent", "normal" or "low""#),
        (#"{"text": "a", "repeat": 0}"#, "repeat must be a whole number from 1 to 5"),
        (#"{"text": "a", "repeat": 6}"#, "repeat must be a whole number from 1 to 5"),
        (#"{"text": "a", "repeat": 2.5}"#, "repeat must be a whole number from 1 to 5"),
        (#"{"text": "a", "repeat": "2"}"#, "repeat must be a whole number from 1 to 5"),
        (#"{"text": "a", "repeat": 1e400}"#, "repeat must be a whole number from 1 to 5"),
        (#"{"text": "a", "wait": 1}"#, "wait must be true or false"),
        (#"{"text": "a", "wait": "yes"}"#, "wait must be true or false"),
        // Speech.
        (#"{"text": "a", "rate": 79}"#, "rate must be a whole number from 80 to 450"),
        (#"{"text": "a", "rate": 451}"#, "rate must be a whole number from 80 to 450"),
        (#"{"text": "a", "pitch": 100}"#, "pitch must be a whole number from 0 to 99"),
        (#"{"text": "a", "pitch": -1}"#, "pitch must be a whole number from 0 to 99"),
        (#"{"text": "a", "volume": 101}"#, "volume must be a whole number from 0 to 100"),
        (#"{"text": "a", "volume": true}"#, "volume must be a whole number from 0 to 100"),
        (#"{"text": "a", "voice": 3}"#, "voice must be a voice's name"),
        (#"{"text": "a", "voice": "../etc"}"#,
         #"voice "../etc" is not a voice name (ASCII letters, digits and -_+., not starting with a dot, at most 64)"#),
        (#"{"text": "a", "voice": ""}"#,
         #"voice "" is not a voice name (ASCII letters, digits and -_+., not starting with a dot, at most 64)"#),
        (#"{"text": "a", "chime": 1}"#, "chime must be true, false or a chime's name"),
        (#"{"text": "a", "chime": "a b"}"#,
         #"chime "a b" is not a chime name (ASCII letters, digits and -_+., not starting with a dot, at most 64)"#),
        // Time.
        (#"{"text": "a", "ttl": 0}"#, "ttl must be a number of seconds from 0.001 to 2592000"),
        (#"{"text": "a", "ttl": -1}"#, "ttl must be a number of seconds from 0.001 to 2592000"),
        (#"{"text": "a", "ttl": 2592000.5}"#, "ttl must be a number of seconds from 0.001 to 2592000"),
        (#"{"text": "a", "ttl": 1e400}"#, "ttl must be a number of seconds from 0.001 to 2592000"),
        (#"{"text": "a", "ttl": "30"}"#, "ttl must be a number of seconds from 0.001 to 2592000"),
        (#"{"text": "a", "max_speech": 3601}"#, "max_speech must be a number of seconds from 0.1 to 3600"),
        (#"{"text": "a", "max_speech": 0}"#, "max_speech must be a number of seconds from 0.1 to 3600"),
        // The client's key.
        (#"{"text": "a", "id": ""}"#, "id must be a string of 1 to 128 bytes or a whole number"),
        (#"{"text": "a", "id": 1.5}"#, "id must be a string of 1 to 128 bytes or a whole number"),
        (#"{"text": "a", "id": true}"#, "id must be a string of 1 to 128 bytes or a whole number"),
        ("{\"text\": \"a\", \"id\": \"" + String(repeating: "好", count: 43) + "\"}",
         "id must be a string of 1 to 128 bytes or a whole number"),
        (#"{"text": "a", "id": 9007199254740992}"#, "id as a number must be at most 9007199254740991; send larger ones as strings"),
        (#"{"text": "a", "id": "a\u0000"}"#, "id holds control characters"),
        (#"{"text": "a", "id": "a\nb"}"#, "id holds control characters"),
        // Commands.
        (#"{"text": "a", "all": true}"#, #"all goes only with "cmd": "cancel""#),
        (#"{"cmd": "stop"}"#, #"cmd unknown command "stop" (cancel, skip, clear, status, volume)"#),
        (#"{"cmd": "\u505c"}"#, #"cmd unknown command "\u505c" (cancel, skip, clear, status, volume)"#),
        (#"{"cmd": 1}"#, "cmd must be a string: cancel, skip, clear, status or volume"),
        (#"{"cmd": "cancel"}"#, #"id missing (or "all": true)"#),
        (#"{"cmd": "cancel", "all": false}"#, #"id missing (or "all": true)"#),
        (#"{"cmd": "cancel", "all": "yes"}"#, "all must be true or false"),
        (#"{"cmd": "cancel", "id": "x", "all": true}"#, "all cannot go with id"),
        (#"{"cmd": "cancel", "id": ""}"#, "id must be a string of 1 to 128 bytes or a whole number"),
        (#"{"cmd": "skip", "text": "a"}"#, #"text does not go with "cmd""#),
        (#"{"text": "a", "cmd": "clear"}"#, #"text does not go with "cmd""#),
        (#"{"cmd": "status", "priority": "low"}"#, #"priority does not go with "cmd""#),
        (#"{"cmd": "skip", "id": "x"}"#, #"id goes only with "cmd": "cancel""#),
        (#"{"cmd": "clear", "all": true}"#, #"all goes only with "cmd": "cancel""#),
        (#"{"cmd": "skip", "colour": 1}"#,
         "colour unknown field (known: text, priority, repeat, chime, voice, rate, pitch, volume, id, ttl, max_speech, wait, cmd, all, value)"),
        (#"{"cmd": "skip", "cmd": "clear"}"#, "cmd given twice"),
    ])
    func badFieldsAreNamed(line: String, expected: String) {
        #expect(reply(line) == "ERR bad-field \(expected)\n")
    }

    @Test func voicesAndChimesOutsideTheServersSetsAreRefused() {
        let rules = MessageRules(voices: ["zh", "yue", "en"], chimes: ["ding"])
        #expect(reply(#"{"text": "a", "voice": "fr"}"#, rules: rules) == #"ERR bad-field voice no voice named "fr" (have: en, yue, zh)"# + "\n")
        #expect(reply(#"{"text": "a", "chime": "bell"}"#, rules: rules) == #"ERR bad-field chime no chime named "bell" (have: ding)"# + "\n")
        #expect(reply(#"{"text": "a", "chime": "bell"}"#, rules: MessageRules(chimes: []))
            == #"ERR bad-field chime no chime named "bell" (have: none)"# + "\n")
        let many = MessageRules(voices: Set((1...20).map { "v\($0 + 10)" }))
        #expect(reply(#"{"text": "a", "voice": "x"}"#, rules: many)
            == #"ERR bad-field voice no voice named "x" (have: v11, v12, v13, v14, v15, v16, v17, v18, v19, v20, v21, v22, and 8 more)"# + "\n")
        // A set is the whole truth: a name in it needs no other check, and chime true or false needs none.
        var options = MessageOptions()
        options.chime = .off
        options.voice = "zh"
        #expect(parse(#"{"text": "a", "chime": false, "voice": "zh"}"#, rules: rules) == .submission(Submission(text: "a", options: options)))
        if case .submission(let submission) = parse(#"{"text": "a", "chime": true}"#, rules: MessageRules(chimes: [])) {
            #expect(submission.options.chime == .on)
        } else {
            Issue.record("chime true refused with an empty set")
        }
    }

    @Test func aLineNotStartingWithABraceIsText() {
        #expect(parse(#"a {"text": "b"}"#) == .announce(#"a {"text": "b"}"#))
        #expect(parse(#"[1, 2]"#) == .announce("[1, 2]"))
        #expect(parse("\u{3000}{\"text\": \"b\"}") == .submission(Submission(text: "b")))
    }

    @Test func rawControlCharactersInAJSONLineAreRefusedAsInAPlainLine() {
        #expect(reply("{\"text\": \"a\u{1}b\"}") == "ERR bad-text line holds NUL or other control characters\n")
        #expect(reply("{\"text\": \"a\u{0}b\"}") == "ERR bad-text line holds NUL or other control characters\n")
        // A raw tab is white space between tokens and a space in the text.
        #expect(parse("{\t\"text\":\t\"a\tb\"}") == .submission(Submission(text: "a b")))
    }
}

/// The refusals the JSON protocol added, as the client reads them.
struct RefusalTests {
    @Test func newRefusalsReadAsTheProtocolSays() {
        #expect(LineProtocol.error(.badJSON("not valid JSON at character 2 (near \"x\")"))
            == "ERR bad-json not valid JSON at character 2 (near \"x\")\n")
        #expect(LineProtocol.error(.badField("repeat", "must be a whole number from 1 to 5"))
            == "ERR bad-field repeat must be a whole number from 1 to 5\n")
        #expect(LineProtocol.error(.badEncoding(.gbk)) == "ERR bad-encoding line is not valid GBK\n")
        #expect(LineProtocol.error(.badEncoding(.gb18030)) == "ERR bad-encoding line is not valid GB18030\n")
        #expect(LineProtocol.error(.notFound("nothing is speaking")) == "ERR not-found nothing is speaking\n")
        #expect(LineProtocol.error(.notFound(id: "订单7")) == "ERR not-found nothing waiting or speaking has id \"\\u8ba2\\u53557\"\n")
    }
}
