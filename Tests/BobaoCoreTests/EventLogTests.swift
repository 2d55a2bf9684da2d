import BobaoCore
import BobaoServer
import Foundation
import Synchronization
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

    /// Under systemd (standard error is the journal), each line is `<N>message`: journald reads the priority
    /// and adds its own time stamp. On a terminal: local time with its offset, and the priority in words.
    @Test func journalLinesCarryThePriorityAndNoTimeStamp() {
        let lines = Mutex<[String]>([])
        let journal = EventLog(journal: true) { line in lines.withLock { $0.append(line) } }
        journal("accepted #1")
        journal(LogPriority.warning + "sound server unavailable")
        journal(LogPriority.error + "spool checkpoint failed:\nsecond line")
        journal("<9>not a priority")
        #expect(lines.withLock { $0 } == ["<6>accepted #1\n", "<4>sound server unavailable\n",
                                          "<3>spool checkpoint failed:\\nsecond line\n", "<6><9>not a priority\n"])
        let terminal = Mutex<[String]>([])
        let plain = EventLog(journal: false) { line in terminal.withLock { $0.append(line) } }
        plain(LogPriority.warning + "sound server unavailable")
        plain("accepted #1")
        let written = terminal.withLock { $0 }
        #expect(written[0].hasSuffix(" bobao: warning: sound server unavailable\n") && written[1].hasSuffix(" bobao: accepted #1\n"))
        // 2026-11-30T03:22:09.123+08:00, or Z when local time is UTC.
        let stamp = String(written[1].prefix { $0 != " " })
        #expect(stamp.count == 23 + (stamp.hasSuffix("Z") ? 1 : 6), "\(stamp)")
        #expect(stamp.dropFirst(10).first == "T" && stamp.dropFirst(19).first == ".")
    }

    /// `JOURNAL_STREAM` names standard error's device and inode; a child that inherited it but writes
    /// elsewhere keeps the plain format.
    @Test func theJournalIsRecognizedOnlyWhenStandardErrorIsIt() {
        #expect(!EventLog.standardErrorIsJournal(environment: nil))
        #expect(!EventLog.standardErrorIsJournal(environment: "garbage"))
        var info = stat()
        #expect(fstat(2, &info) == 0)
        #expect(EventLog.standardErrorIsJournal(environment: "\(info.st_dev):\(info.st_ino)"))
        #expect(!EventLog.standardErrorIsJournal(environment: "\(info.st_dev):\(info.st_ino + 1)"))
    }
}
