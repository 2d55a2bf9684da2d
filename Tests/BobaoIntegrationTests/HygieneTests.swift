import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// What the log shows: text from clients that cannot spoof a terminal or split a line, and faults that
    /// go on for long that are logged once and then summed up.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct HygieneTests {
        /// The log's lines; each must be one event, `<timestamp> bobao: <message>`.
        static func lines(of log: String) -> [Substring] {
            log.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        }

        @Test func bidiSeparatorAndC1CharactersInALineAreEscapedInTheLog() throws {
            let sound = try TestSoundServer.shared()
            let bobao = try ServerProcess(pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            // U+202E turns the rest of a terminal line around; U+2028 is a line break to some readers.
            #expect(try bobao.exchange("新客户\u{202E}来了请\u{2028}取餐\t谢谢\n") == ["OK 1"])
            // U+0085 (NEL) is a C1 control: not text to speak at all.
            #expect(try bobao.exchange("来了\u{0085}请\n") == ["ERR bad-text line holds NUL or other control characters"])
            #expect(bobao.waitForLog("spoke #1"))
            #expect(bobao.stop() == 0)
            let log = bobao.log
            let shown = #""新客户\u{202E}来了请\u{2028}取餐\t谢谢""#
            #expect(log.contains("accepted #1 from 127.0.0.1:"), "\(log)")
            #expect(log.contains(": " + shown + "\n"))
            #expect(log.contains("speaking #1 " + shown))
            #expect(!log.unicodeScalars.contains { [0x202E, 0x85, 0x2028, 0x09].contains($0.value) })
            let lines = Self.lines(of: log)
            #expect(lines.allSatisfy { $0.hasPrefix("20") && $0.contains(" bobao: ") }, "one line per event: \(lines)")
            // (A stop that comes between "spoke #1" and the speaker's next turn may add "finishing #1 before exit".)
            #expect(lines.filter { $0.contains("#1") && !$0.contains("finishing #1") }.count == 3, "accepted, speaking, spoke")
        }

        /// A sound server that is not there is retried at most 2 s apart for as long as it takes; the log
        /// shows the first few failures, not one line per attempt, and one line when it is back.
        @Test func aMissingSoundServerIsLoggedAFewTimesNotOnEveryAttemptAndItsReturnOnce() throws {
            let pulse = try PrivatePulseServer(sinkName: "hygiene_late")
            pulse.stop()
            let bobao = try ServerProcess(pulseServer: pulse.address)
            #expect(try bobao.exchange("欢迎光临\n") == ["OK 1"])
            // The behaviour under test is what a stretch of time without a server leaves in the log: seven
            // attempts in six seconds (100 ms doubling to 2 s).
            Thread.sleep(forTimeInterval: 6)
            let failures = Self.lines(of: bobao.log).filter { $0.contains("sound server unavailable") && !$0.contains(" waits: ") }
            #expect(failures.count == 3, "the first three, with the backoff: \(failures)")
            // Start-up, the accepted line, the announcement's wait, the three failures, a summary at most.
            #expect(Self.lines(of: bobao.log).count <= 7, "\(bobao.log)")

            try pulse.start()
            let started = Date()
            let recorder = try MonitorRecorder(address: pulse.address, sinkName: "hygiene_late")
            #expect(bobao.waitForLog("keep-alive stream open", timeout: 10))
            #expect(Date().timeIntervalSince(started) < 5, "retried at most 2 s apart")
            let back = Self.lines(of: bobao.log).first { $0.contains("keep-alive stream open") } ?? ""
            #expect(back.contains("; back after ") && back.contains(" failures in "), "\(back)")
            #expect(bobao.waitForLog("spoke #1", timeout: 15))
            #expect(recorder.waitUntil(timeout: 10) { SignalAnalysis($0, sampleRate: 22050).firstLoudSample() != nil })
            #expect(bobao.stop() == 0)
        }

        /// A missing sink is logged once, with the sinks there are, however long it stays away: Bobao waits for
        /// the sound server's sink events instead of retrying. The sink is used once it appears.
        @Test func aMissingSinkIsLoggedOnceAndUsedOnceItAppears() throws {
            let pulse = try PrivatePulseServer(sinkName: "hygiene_other")
            let bobao = try ServerProcess(arguments: ["--sink", "hygiene_later"], pulseServer: pulse.address)
            #expect(bobao.waitForLog("no sink 'hygiene_later' (sinks: hygiene_other)"))
            // Three seconds on (a retry every 2 s would have logged by then), still that one line.
            Thread.sleep(forTimeInterval: 3)
            let lines = Self.lines(of: bobao.log)
            #expect(lines.filter { $0.contains("sound server connected") }.count == 1, "\(lines)")
            #expect(lines.filter { $0.contains("no sink 'hygiene_later'") }.count == 1, "\(lines)")
            #expect(!lines.contains { $0.contains("failed") || $0.contains("retrying") }, "\(lines)")

            try pulse.pactl("load-module", "module-null-sink", "sink_name=hygiene_later")
            #expect(bobao.waitForLog("keep-alive stream open on sink hygiene_later", timeout: 10))
            #expect(try bobao.exchange("好\n") == ["OK 1"])
            #expect(bobao.waitForLog("spoke #1"))
            #expect(bobao.stop() == 0)
        }
    }
}
