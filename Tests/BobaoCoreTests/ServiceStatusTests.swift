import BobaoAudio
import BobaoCore
@testable import BobaoServer
import Testing

/// The `STATUS=` line systemd shows: the sound state and sink, why it does not play, the queue's depth and the
/// announcement in hand.
struct ServiceStatusTests {
    static func board(waiting: [Priority: Int] = [:], storing: Int = 0, speaking: UInt64? = nil) -> AnnouncementBoard.Snapshot {
        AnnouncementBoard.Snapshot(
            waiting: waiting, storing: storing, capacity: 256, speaking: speaking.map { Announcement(id: $0, text: "x") },
            counters: [:], lastError: nil, lastErrorAt: nil)
    }

    @Test func playingWithTheQueueAndTheOneSpeaking() {
        let output = OutputStatus(state: "playing", sink: "usb", sinks: ["usb"], lastError: "an old failure")
        #expect(ServiceStatus.line(output: output, board: Self.board()) == "sound: playing, sink usb; queue: 0 waiting")
        let busy = Self.board(waiting: [.urgent: 1, .normal: 2], storing: 1, speaking: 41)
        #expect(ServiceStatus.line(output: output, board: busy) == "sound: playing, sink usb; queue: 4 waiting; speaking #41")
    }

    @Test func notPlayingSaysWhyAndHoldsTheAnnouncementInHand() {
        let connecting = OutputStatus(state: "connecting", lastError: "sound server unavailable (Connection refused)")
        #expect(ServiceStatus.line(output: connecting, board: Self.board(speaking: 7))
            == "sound: connecting (sound server unavailable (Connection refused)); queue: 0 waiting; holding #7")
        let missing = OutputStatus(state: "no-sink", sink: "usb", reason: "no sink 'usb' (sinks: null)", lastError: "x")
        #expect(ServiceStatus.line(output: missing, board: Self.board(waiting: [.low: 1]))
            == "sound: no-sink, sink usb (no sink 'usb' (sinks: null)); queue: 1 waiting")
        #expect(ServiceStatus.line(output: OutputStatus(state: "connecting"), board: Self.board()) == "sound: connecting; queue: 0 waiting")
    }

    @Test func stoppingComesFirst() {
        let output = OutputStatus(state: "stopped", sink: "usb", lastError: "gone")
        #expect(ServiceStatus.line(output: output, board: Self.board(speaking: 3), stopping: true)
            == "stopping; sound: stopped, sink usb; queue: 0 waiting; holding #3")
    }

    @Test func aNewlineCannotStartAnotherFieldAndTheLineIsShort() {
        let output = OutputStatus(state: "no-sink", sink: "a\nREADY=1", reason: String(repeating: "长", count: 1000))
        let line = ServiceStatus.line(output: output, board: Self.board())
        #expect(!line.contains("\n"))
        #expect(line.hasPrefix("sound: no-sink, sink a READY=1 (长长"))
        #expect(line.count == ServiceStatus.maximumLength && line.hasSuffix("…"))
    }
}
