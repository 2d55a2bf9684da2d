import BobaoAudio
import BobaoCore
import BobaoPlatform
import BobaoSpeech
import Dispatch
import Glibc
import Synchronization

/// Speaks announcements one at a time, in order, on its own thread: synthesizes each into the keep-alive
/// player, lets the synthesizer's end-of-message callback resume the silence, and waits until the speech
/// has been heard before taking the next. An announcement cut by a sound-server failure is said again
/// from its start.
public final class Speaker: Sendable {
    private let board: AnnouncementBoard
    private let synthesizer: any Synthesizer
    private let player: KeepAlivePlayer
    private let parameters: SpeechParameters
    private let ttlSeconds: Double
    private let log: EventLog
    private let finished = DispatchSemaphore(value: 0)
    /// The announcement being spoken, if any.
    private let current = Mutex<Announcement?>(nil)

    public init(
        board: AnnouncementBoard, synthesizer: any Synthesizer, player: KeepAlivePlayer,
        parameters: SpeechParameters, ttlSeconds: Double = 120, log: EventLog
    ) {
        self.ttlSeconds = ttlSeconds
        self.board = board
        self.synthesizer = synthesizer
        self.player = player
        self.parameters = parameters
        self.log = log
    }

    public func start() {
        startThread(name: "bobao.speaker") { [self] in
            while let announcement = board.take(), speak(announcement) {}
            finished.signal()
        }
    }

    /// Waits until the board is closed and the speaker has stopped, or `timeout` seconds pass.
    /// Returns whether it stopped.
    public func waitUntilFinished(timeout: Double) -> Bool {
        finished.wait(timeout: .now() + timeout) == .success
    }

    public var speaking: Announcement? { current.withLock { $0 } }

    /// Takes a spoken, failed or expired announcement out of the spool.
    private func finish(_ announcement: Announcement) {
        do { try board.finished(announcement) } catch {
            log("\(error.description); #\(announcement.id) may be spoken again after a restart")
        }
    }

    /// Speaks one announcement; false when the player has stopped and the speaker should too.
    private func speak(_ announcement: Announcement) -> Bool {
        current.withLock { $0 = announcement }
        defer { current.withLock { $0 = nil } }
        guard player.waitUntilReady() else {
            log("not spoken (server stopping): #\(announcement.id) \(EventLog.quote(announcement.text))")
            return false
        }
        // Checked once the sound server is there to say it: an announcement that waited too long (for its
        // turn, or for a sound server to come back) is dropped and logged, never spoken late. Dropping it
        // costs the player nothing.
        let age = Double(WallClock.nowMilliseconds() - announcement.acceptedAt) / 1000
        if WallClock.bootSeconds() > announcement.expiresAt {
            log("expired #\(announcement.id) \(EventLog.quote(announcement.text)): accepted \(Int(age)) s ago, "
                + "over the \(Int(ttlSeconds)) s limit; not spoken")
            finish(announcement)
            return true
        }
        guard let utterance = player.beginUtterance() else {
            log("not spoken (server stopping): #\(announcement.id) \(EventLog.quote(announcement.text))")
            return false
        }
        let started = WallClock.monotonicSeconds()
        // Numbers become words before eSpeak sees them; the log shows both when they differ.
        let spoken = TextNormalizer.standard.normalize(announcement.text)
        let shown = spoken == announcement.text ? "" : " as \(EventLog.quote(spoken))"
        log("speaking #\(announcement.id) \(EventLog.quote(announcement.text))\(shown)")
        let player = self.player, synthesizer = self.synthesizer
        let outcome: SynthesisOutcome
        do {
            outcome = try synthesizer.synthesize(spoken, parameters: parameters) { event in
                switch event {
                case .audio(let samples):
                    if !player.write(samples, for: utterance) { synthesizer.cancel() }
                case .end(cancelled: false):
                    // The synthesis-finished callback: silence resumes behind the speech.
                    player.endUtterance(utterance)
                case .end(cancelled: true):
                    player.endUtterance(utterance)
                }
            }
        } catch {
            log("could not speak #\(announcement.id): \(error)")
            finish(announcement)
            player.endUtterance(utterance)
            _ = player.waitUntilPlayed(utterance)
            return true
        }
        guard outcome == .completed, player.waitUntilPlayed(utterance) else {
            let cause = player.isStopping ? "the shutdown" : "a sound-server failure"
            log("#\(announcement.id) was cut by \(cause); it will be said again from its start")
            board.requeueFirst(announcement)
            return true
        }
        let milliseconds = Int(((WallClock.monotonicSeconds() - started) * 1000).rounded())
        finish(announcement)
        log("spoke #\(announcement.id) in \(milliseconds / 1000).\(String(milliseconds % 1000 + 1000).dropFirst()) s")
        return true
    }
}
