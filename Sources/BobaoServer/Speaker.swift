import BobaoAudio
import BobaoCore
import BobaoPlatform
import BobaoSpeech
import Dispatch
import Glibc
import Synchronization

/// Speaks announcements one at a time, in order, on its own thread: synthesizes each into the audio
/// output, lets the synthesizer's end-of-message callback end the utterance, and waits until the speech
/// has been heard before taking the next.
///
/// - An announcement whose `--ttl` ran out before its turn is dropped, never spoken late.
/// - One that would speak longer than `--max-speech` is cut there and counts as spoken.
/// - One cut by the output (the sound server went away, or the shutdown) is said again from its start.
public final class Speaker: Sendable {
    private let board: AnnouncementBoard
    private let synthesizer: any Synthesizer
    private let output: any AudioOutput
    private let parameters: SpeechParameters
    private let maximumSpeechSeconds: Double
    private let log: EventLog
    private let finished = DispatchSemaphore(value: 0)
    /// The announcement being spoken, if any.
    private let current = Mutex<Announcement?>(nil)

    /// - Parameters:
    ///   - maximumSpeechSeconds: one announcement is cut after this much speech.
    public init(
        board: AnnouncementBoard, synthesizer: any Synthesizer, output: any AudioOutput,
        parameters: SpeechParameters, maximumSpeechSeconds: Double = 60, log: EventLog
    ) {
        self.board = board
        self.synthesizer = synthesizer
        self.output = output
        self.parameters = parameters
        self.maximumSpeechSeconds = maximumSpeechSeconds
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

    private func notSpoken(_ announcement: Announcement) {
        let kept = board.keepsWhatWaits ? "; kept in the spool for the next start"
            : board.spool == nil ? "" : "; NOT kept: the spool is failing"
        log("not spoken (server stopping): #\(announcement.id) \(EventLog.quote(announcement.text))\(kept)")
    }

    /// Speaks one announcement; false when the output has stopped and the speaker should too.
    private func speak(_ announcement: Announcement) -> Bool {
        current.withLock { $0 = announcement }
        defer { current.withLock { $0 = nil } }
        guard output.waitUntilReady() else {
            notSpoken(announcement)
            return false
        }
        // Checked once the sound server is there to say it: an announcement that waited too long (for its
        // turn, or for a sound server to come back) is dropped and logged, never spoken late. Both times are
        // on the boot clock, which the wall clock's jumps do not move.
        let overdue = WallClock.bootSeconds() - announcement.expiresAt
        if overdue > 0 {
            log("expired #\(announcement.id) \(EventLog.quote(announcement.text)): its turn came "
                + "\(RepeatedFault.describe(seconds: overdue)) after the \(Self.format(board.ttlSeconds)) s limit (--ttl); not spoken")
            finish(announcement)
            return true
        }
        // Everything that does not need the stream happens before the utterance begins: between the flush
        // of the queued silence and the first samples, every microsecond is latency.
        let spoken = TextNormalizer.standard.normalize(announcement.text)  // numbers become words
        let shown = spoken == announcement.text ? "" : " as \(EventLog.quote(spoken))"
        let budget = SpeechBudget(samples: Int(maximumSpeechSeconds * Double(synthesizer.sampleRate)))
        log("speaking #\(announcement.id) \(EventLog.quote(announcement.text))\(shown)")
        guard let utterance = output.beginUtterance() else {
            notSpoken(announcement)
            return false
        }
        let started = WallClock.monotonicSeconds()
        let output = self.output, synthesizer = self.synthesizer
        let outcome: SynthesisOutcome
        do {
            outcome = try synthesizer.synthesize(spoken, parameters: parameters) { event in
                switch event {
                case .audio(let samples):
                    let allowed = budget.spend(samples.count)
                    if allowed > 0, !output.write(UnsafeBufferPointer(rebasing: samples[..<allowed]), for: utterance) {
                        synthesizer.cancel()  // the output cut the utterance
                    } else if allowed < samples.count, budget.cutNow() {
                        synthesizer.cancel()  // --max-speech
                    }
                case .end:
                    // The synthesis-finished callback (or the cancellation's): silence resumes behind the speech.
                    output.endUtterance(utterance)
                }
            }
        } catch {
            log("could not speak #\(announcement.id): \(error)")
            finish(announcement)
            output.endUtterance(utterance)
            _ = output.waitUntilPlayed(utterance)
            return true
        }
        let cutAtMaximum = budget.wasCut
        guard outcome == .completed || cutAtMaximum, output.waitUntilPlayed(utterance) else {
            board.requeueFirst(announcement)
            guard !output.isStopping else {
                let kept = board.keepsWhatWaits ? "it stays in the spool and is said from its start after the next start"
                    : board.spool == nil ? "not kept (--no-spool)" : "NOT kept: the spool is failing"
                log("#\(announcement.id) was cut by the shutdown; \(kept)")
                return false
            }
            log("#\(announcement.id) was cut by a sound-server failure; it will be said again from its start")
            return true
        }
        finish(announcement)
        if cutAtMaximum {
            let limit = Self.format(maximumSpeechSeconds)
            log("cut #\(announcement.id) after \(limit) s (--max-speech \(limit)); counted as spoken")
        } else {
            let milliseconds = Int(((WallClock.monotonicSeconds() - started) * 1000).rounded())
            log("spoke #\(announcement.id) in \(milliseconds / 1000).\(String(milliseconds % 1000 + 1000).dropFirst()) s")
        }
        return true
    }

    /// `60` for whole seconds, `0.5` otherwise.
    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e9 ? "\(Int(seconds))" : "\(seconds)"
    }
}

/// How many samples of one announcement may still be played (`--max-speech`). Used from the synthesizer's
/// thread; the lock only makes it shareable with the speaker's.
private final class SpeechBudget: Sendable {
    private struct State {
        var remaining: Int
        var cut = false
    }

    private let state: Mutex<State>

    init(samples: Int) {
        state = Mutex(State(remaining: max(samples, 0)))
    }

    /// Takes up to `count` samples from the budget; returns how many may be played.
    func spend(_ count: Int) -> Int {
        state.withLock { state in
            let allowed = min(count, state.remaining)
            state.remaining -= allowed
            return allowed
        }
    }

    /// Marks the announcement cut; true the first time only (cancel the synthesis once).
    func cutNow() -> Bool {
        state.withLock { state in
            defer { state.cut = true }
            return !state.cut
        }
    }

    var wasCut: Bool { state.withLock { $0.cut } }
}
