import BobaoServer
import Testing

struct EventLogTests {
    @Test func quotedTextHasControlBidiAndSeparatorCharactersEscaped() {
        let text = "a\u{202E}b\u{0085}c\u{2028}d\u{1B}[31me\u{7F}f\u{2066}g\u{200F}h\u{061C}i\u{200B}j\u{FEFF}k\u{2029}l"
        let quoted = EventLog.quote(text)
        #expect(quoted == #""a\u{202E}b\u{0085}c\u{2028}d\u{1B}[31me\u{7F}f\u{2066}g\u{200F}h\u{061C}i\u{200B}j\u{FEFF}k\u{2029}l""#)
        #expect(quoted.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F })
    }

    @Test func quotesAndBackslashesAreEscapedSoAnEscapeCannotBeForged() {
        #expect(EventLog.quote(#"say "hi" \u{202E}"#) == #""say \"hi\" \\u{202E}""#)
    }

    @Test func chineseTextAndEmojiPassUnchanged() {
        #expect(EventLog.quote("新客户来了，请到3号窗口 👍🏽") == "\"新客户来了，请到3号窗口 👍🏽\"")
    }

    @Test func everyMessageStaysOneLine() {
        let lines = RecordedLog()
        let log = lines.eventLog
        log("error from a library:\nsecond line\r\u{2028}third \u{202E}reversed")
        let written = lines.written
        #expect(written.count == 1)
        #expect(written[0].filter { $0 == "\n" || $0 == "\r\n" }.count == 1 && written[0].hasSuffix("\n"))
        #expect(written[0].hasSuffix(#"bobao: error from a library:\nsecond line\r\u{2028}third \u{202E}reversed"# + "\n"))
    }
}
