import BobaoAudio
import BobaoCore
import BobaoPlatform
import BobaoSpeech
import Dispatch
import Glibc
import Synchronization

/// Speaks announcements one at a time, in the board's order, on its own thread: plays the chime if one is
/// asked for, synthesizes the text (as many times as `repeat` says, with a pause between) into the audio
/// output, lets the synthesizer's end-of-message callback end the utterance, and waits until the speech has
/// been heard before taking the next. Each outcome goes to the board, which tells the watchers.
///
/// - An announcement whose time to live ran out before its turn is dropped (`expired`), never spoken late;
///   one whose time ran out while no sound server was there `failed`.
/// - One that would speak longer than its `max_speech` (`--max-speech`) is cut there (`cut`).
/// - One the board interrupts stops within milliseconds: said again from its start after an urgent one
///   that cut in, or ended as `cancelled` (cancel, skip).
/// - One cut by the output (the sound server went away, or the shutdown) is said again from its start.
public final class Speaker: Sendable {
    private let board: AnnouncementBoard
    private let synthesizer: any Synthesizer
    private let output: any AudioOutput
    private let parameters: SpeechParameters
    private let maximumSpeechSeconds: Double
    private let chime: @Sendable (ChimeChoice) -> [Int16]?
    private let log: EventLog
    private let speechActivity: @Sendable (Bool) -> Void
    private let finished = DispatchSemaphore(value: 0)
    private let current = Mutex(Current())

    /// The pause between two repetitions of one announcement.
    public static let repeatPauseSeconds = 0.8

    private struct Current {
        var announcement: Announcement?
        var utterance: Utterance?
        /// The board asked to stop it.
        var interruption: AnnouncementBoard.Interruption?
    }

    /// - Parameters:
    ///   - parameters: the voice, rate, pitch and volume of announcements that don't name their own.
    ///   - maximumSpeechSeconds: an announcement is cut after this much speech unless it says otherwise.
    ///   - chime: the samples (at the synthesizer's rate) of the chime an announcement asks for, resolving
    ///     `.serverDefault` and `.on` to the server's `--chime`; nil for none.
    ///   - speechActivity: told `true` just before an utterance begins and `false` once it has been heard
    ///     (or was cut), from the speaker's thread; ducking the other streams hangs on it.
    public init(
        board: AnnouncementBoard, synthesizer: any Synthesizer, output: any AudioOutput,
        parameters: SpeechParameters, maximumSpeechSeconds: Double = 60,
        chime: @escaping @Sendable (ChimeChoice) -> [Int16]? = { _ in nil },
        speechActivity: @escaping @Sendable (Bool) -> Void = { _ in }, log: EventLog
    ) {
        self.board = board
        self.synthesizer = synthesizer
        self.output = output
        self.parameters = parameters
        self.maximumSpeechSeconds = maximumSpeechSeconds
        self.chime = chime
        self.speechActivity = speechActivity
        self.log = log
    }

    public func start() {
        board.setInterrupter { [self] number, why in interrupt(number, why) }
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

    public var speaking: Announcement? { current.withLock { $0.announcement } }

    /// Stops announcement `number` if it is the one being spoken: the synthesis is cancelled and the output
    /// drops what it holds of it, so it falls silent at once. Any thread.
    private func interrupt(_ number: UInt64, _ why: AnnouncementBoard.Interruption) {
        let utterance = current.withLock { current -> Utterance?? in
            guard current.announcement?.id == number else { return nil }
            let first = current.interruption == nil
            if first || why != .cutIn { current.interruption = why }  // a cancellation overrides a cut-in
            return first ? .some(current.utterance) : nil
        }
        guard let utterance else { return }
        synthesizer.cancel()
        if let utterance { output.cut(utterance) } else { output.wake() }  // it may be waiting for the sound server
    }

    /// Speaks one announcement; false when the output has stopped and the speaker should too.
    private func speak(_ announcement: Announcement) -> Bool {
        current.withLock { $0 = Current(announcement: announcement) }
        defer { current.withLock { $0 = Current() } }
        // Waits for the sound server at most until the announcement expires (one already past it is dropped
        // below); both times are on clocks the wall clock's jumps do not move.
        let left = announcement.expiresAt - WallClock.bootSeconds()
        if left > 0, !output.isReady, !output.isStopping {
            let reason = Self.unready(output.status)
            log("#\(announcement.id) waits: \(reason)")
            board.waiting(announcement, reason: reason)
        }
        let ready = left <= 0 || output.waitUntilReady(until: WallClock.monotonicSeconds() + left)
        if let why = current.withLock({ $0.interruption }) { return end(announcement, interruptedBy: why, started: false) }
        guard ready else {
            if output.isStopping {
                board.leftUnspoken(announcement, "before it was spoken")
                return false
            }
            let reason = Self.unready(output.status)
            log(LogPriority.warning + "failed #\(announcement.id) \(EventLog.quote(announcement.text)): \(reason) before its "
                + "\(Self.format(announcement.options.ttlSeconds ?? board.ttlSeconds)) s time to live ran out; not spoken")
            board.finish(announcement, .failed(reason: reason))
            return true
        }
        // An announcement that waited too long for its turn is dropped and logged, never spoken late.
        let overdue = WallClock.bootSeconds() - announcement.expiresAt
        if overdue > 0 {
            let limit = announcement.options.ttlSeconds.map { "its ttl of \(Self.format($0)) s" }
                ?? "the \(Self.format(board.ttlSeconds)) s limit (--ttl)"
            log(LogPriority.warning + "expired #\(announcement.id) \(EventLog.quote(announcement.text)): its turn came "
                + "\(RepeatedFault.describe(seconds: overdue)) after \(limit); not spoken")
            board.finish(announcement, .expired)
            return true
        }
        // Everything that does not need the stream happens before the utterance begins: between the flush
        // of the queued silence and the first samples, every microsecond is latency.
        let options = announcement.options
        var parameters = self.parameters
        if let voice = options.voice { parameters.voice = voice }
        if let rate = options.rate { parameters.rate = rate }
        if let pitch = options.pitch { parameters.pitch = pitch }
        if let volume = options.volume { parameters.volume = volume }
        let spoken = TextNormalizer.standard.normalize(announcement.text)  // numbers become words
        let chimeSamples = chime(options.chime).map { Self.scaled($0, volume: parameters.volume) }
        let maximum = options.maximumSpeechSeconds ?? maximumSpeechSeconds
        let progress = UtteranceProgress(samples: Int(maximum * Double(synthesizer.sampleRate)))
        board.started(announcement)
        speechActivity(true)
        defer { speechActivity(false) }
        log("speaking #\(announcement.id) \(EventLog.quote(announcement.text))"
            + (spoken == announcement.text ? "" : " as \(EventLog.quote(spoken))") + Self.describe(options))
        guard let utterance = output.beginUtterance() else {
            board.leftUnspoken(announcement, "before it was spoken")
            return false
        }
        if current.withLock({ $0.utterance = utterance; return $0.interruption }) != nil { output.cut(utterance) }
        let started = WallClock.monotonicSeconds()
        let outcome: SynthesisOutcome
        do {
            let activity = board.activity  // its onset: the first samples written since `started`
            outcome = try say(spoken, parameters: parameters, repeats: options.repeatCount, chime: chimeSamples,
                              progress: progress, utterance: utterance) { activity?.firstSamplesWritten(announcement) }
        } catch {
            log(LogPriority.error + "could not speak #\(announcement.id): \(error)")
            if !progress.ended { output.endUtterance(utterance) }
            _ = output.waitUntilPlayed(utterance)
            board.finish(announcement, .failed(reason: error.description))
            return true
        }
        if let why = current.withLock({ $0.interruption }) {
            if !progress.ended { output.endUtterance(utterance) }
            _ = output.waitUntilPlayed(utterance)
            return end(announcement, interruptedBy: why)
        }
        let cutAtMaximum = progress.wasCut
        let played = (outcome == .completed || cutAtMaximum) && output.waitUntilPlayed(utterance)
        // Interrupted while its last samples played out (the output holds up to a couple of seconds); one
        // heard to its end before the cut could take effect stays done.
        if !played, let why = current.withLock({ $0.interruption }) { return end(announcement, interruptedBy: why) }
        guard played else {
            guard !output.isStopping else {
                log("#\(announcement.id) was cut by the shutdown; "
                    + (board.notKept ?? "it stays in the spool and is said from its start after the next start"))
                if let notKept = board.notKept {
                    // Lost with the process: its waiting clients learn it now.
                    board.finish(announcement, .failed(reason: "the server stopped while it was spoken; \(notKept.lowercased())"))
                } else {
                    board.requeueFirst(announcement)
                }
                return false
            }
            guard board.requeueFirst(announcement) else { return true }  // a client cancelled it meanwhile
            let status = output.status
            if status.state == "corked" {
                log("#\(announcement.id) was cut: \(status.reason ?? "the sound server corked the stream"); it will be said again from its start")
            } else {
                log(LogPriority.warning + "#\(announcement.id) was cut by a sound-server failure; it will be said again from its start")
                board.noteError("a sound-server failure cut #\(announcement.id)")
            }
            return true
        }
        if cutAtMaximum {
            let limit = Self.format(maximum)
            let source = options.maximumSpeechSeconds == nil ? "--max-speech \(limit)" : "its max_speech"
            log("cut #\(announcement.id) after \(limit) s (\(source)); counted as spoken")
            board.finish(announcement, .cut)
        } else {
            let milliseconds = Int(((WallClock.monotonicSeconds() - started) * 1000).rounded())
            log("spoke #\(announcement.id) in \(milliseconds / 1000).\(String(milliseconds % 1000 + 1000).dropFirst()) s")
            board.finish(announcement, .done)
        }
        return true
    }

    /// The chime, then the text `repeats` times with a pause between, into one utterance; the synthesizer's
    /// end-of-message callback for the last repetition (or for a cancelled one) ends the utterance.
    /// `firstSamples` runs once, as the first samples are handed to the output.
    private func say(
        _ text: String, parameters: SpeechParameters, repeats: Int, chime: [Int16]?, progress: UtteranceProgress,
        utterance: Utterance, firstSamples: @escaping @Sendable () -> Void
    ) throws(SpeechError) -> SynthesisOutcome {
        let output = self.output, synthesizer = self.synthesizer
        @Sendable func play(_ samples: UnsafeBufferPointer<Int16>) {
            let allowed = progress.spend(samples.count)
            if allowed > 0 {
                // The onset: the first samples are ready (a write may then wait for room behind the --gap).
                if progress.firstWritten() { firstSamples() }
                guard output.write(UnsafeBufferPointer(rebasing: samples[..<allowed]), for: utterance) else {
                    progress.markLost()
                    synthesizer.cancel()  // the output cut the utterance
                    return
                }
            }
            if allowed < samples.count, progress.cutNow() {
                synthesizer.cancel()  // max_speech
            }
        }
        chime?.withUnsafeBufferPointer { play($0) }
        var outcome = SynthesisOutcome.completed
        for repetition in 1...max(1, repeats) {
            guard !progress.stopped, current.withLock({ $0.interruption }) == nil else { return .cancelled }
            if repetition > 1 {
                let pause = [Int16](repeating: 0, count: Int(Self.repeatPauseSeconds * Double(synthesizer.sampleRate)))
                if !pause.withUnsafeBufferPointer({ output.write($0, for: utterance) }) { return .cancelled }
            }
            let last = repetition == repeats
            outcome = try synthesizer.synthesize(text, parameters: parameters) { event in
                switch event {
                case .audio(let samples):
                    play(samples)
                case .end(let cancelled):
                    // The synthesis-finished callback (or the cancellation's): silence resumes behind the speech.
                    if last || cancelled, progress.endNow() { output.endUtterance(utterance) }
                }
            }
            if outcome == .cancelled { return outcome }
        }
        return outcome
    }

    /// An announcement the board stopped: said again after the urgent ones, or cancelled. One that had not
    /// started (it waited for the sound server) simply goes back, without an `interrupted` event.
    private func end(
        _ announcement: Announcement, interruptedBy why: AnnouncementBoard.Interruption, started: Bool = true
    ) -> Bool {
        switch why {
        case .cutIn where !started:
            board.requeueFirst(announcement)
        case .cutIn:
            // Unless a client cancelled it too, which the board knows (and then ends it as cancelled).
            if board.requeueFirst(announcement, interrupted: true) {
                log("#\(announcement.id) gave way to an urgent announcement; it will be said again from its start")
            }
        case .cancelled(let reason):
            log("stopped #\(announcement.id) (\(reason))")
            board.finish(announcement, .cancelled(reason: reason))
        }
        return true
    }

    /// Why the output cannot play now, for the log and a `waiting` event.
    static func unready(_ status: OutputStatus) -> String {
        switch status.state {
        case "no-sink", "corked": status.reason ?? status.state
        // The stream on a named sink failed (the sink went away): the sinks are being listed again.
        case _ where status.lastError?.hasPrefix("playback stream on sink") == true: "no sink to play it on (\(status.lastError!))"
        default: "no sound server to play it on" + (status.lastError.map { " (\($0))" } ?? "")
        }
    }

    /// The chime at the announcement's volume (100 is the chime as made; eSpeak NG's 100 is its normal).
    static func scaled(_ samples: [Int16], volume: Int) -> [Int16] {
        guard volume != 100 else { return samples }
        let gain = Double(max(0, volume)) / 100
        return samples.map { Int16(clamping: Int((Double($0) * gain).rounded())) }
    }

    /// ` (urgent, repeat 2, chime)` for the log; empty for a plain line.
    static func describe(_ options: MessageOptions) -> String {
        var parts: [String] = []
        if options.priority != .normal { parts.append(options.priority.rawValue) }
        if options.repeatCount > 1 { parts.append("repeat \(options.repeatCount)") }
        switch options.chime {
        case .on: parts.append("chime")
        case .named(let name): parts.append("chime \(name)")
        case .off, .serverDefault: break
        }
        if let voice = options.voice { parts.append("voice \(voice)") }
        if let volume = options.volume { parts.append("volume \(volume)") }
        if let key = options.clientID { parts.append("id \(EventLog.quote(key))") }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")"
    }

    /// `60` for whole seconds, `0.5` otherwise.
    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e9 ? "\(Int(seconds))" : "\(seconds)"
    }
}

/// One utterance's progress, shared by the speaker's thread and the synthesizer's: how many samples it may
/// still play (`max_speech`), whether it was cut there or lost by the output, and whether it has ended.
private final class UtteranceProgress: Sendable {
    private struct State {
        var remaining: Int
        var written = false
        var cut = false
        var lost = false
        var ended = false
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

    /// Marks the utterance cut at its limit; true the first time only (cancel the synthesis once).
    func cutNow() -> Bool {
        state.withLock { state in
            defer { state.cut = true }
            return !state.cut
        }
    }

    /// Marks samples written; true the first time only (the onset).
    func firstWritten() -> Bool {
        state.withLock { state in
            defer { state.written = true }
            return !state.written
        }
    }

    func markLost() { state.withLock { $0.lost = true } }

    /// Marks the utterance ended; true the first time only (end it once).
    func endNow() -> Bool {
        state.withLock { state in
            defer { state.ended = true }
            return !state.ended
        }
    }

    var wasCut: Bool { state.withLock { $0.cut } }
    var ended: Bool { state.withLock { $0.ended } }
    /// Cut at the limit or lost: no more repetitions.
    var stopped: Bool { state.withLock { $0.cut || $0.lost } }
}
