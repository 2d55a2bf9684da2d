import BobaoAudio
import BobaoPlatform
import Foundation

/// An audio output for the speaker's tests: counts what each utterance was given, plays instantly, and
/// can lose its "stream" partway through an utterance, as a sound server that dies does, or be unready for
/// a while, as one that is away is.
final class FakeAudioOutput: AudioOutput, @unchecked Sendable {
    struct Record: Equatable {
        var samples = 0
        var ended = false
        /// Cut by `cut` before it was played.
        var cut = false
    }

    private let condition = NSCondition()
    private var session = 0
    private var stopping = false
    private var ready = true
    private var failure: String?
    private var records: [Record] = []
    /// The serial of the last utterance `waitUntilPlayed` reported played: a cut no longer reaches it.
    private var playedSerial = 0
    /// Set by `loseStream(afterSamples:)`: the next utterance is cut once it has been given this many.
    private var loseAfter: Int?

    /// One record per utterance begun, in order.
    var utterances: [Record] { condition.withLock { records } }

    /// The utterance in progress (or the next) is cut once it has been given `samples` samples; the
    /// output is ready again at once, as after a quick reconnection.
    func loseStream(afterSamples samples: Int) {
        condition.withLock { loseAfter = samples }
    }

    /// Makes the output unready (the sound server is away; `failure` is what `status` reports as the last
    /// error) or ready again, waking whoever waits for it.
    func setReady(_ isReady: Bool, failure: String? = nil) {
        condition.withLock {
            ready = isReady
            if let failure { self.failure = failure }
            condition.broadcast()
        }
    }

    func start() {}

    private var volume: Int?

    /// The last `setVolume(percent:)`.
    var volumePercent: Int? { condition.withLock { volume } }

    func setVolume(percent: Int) {
        condition.withLock { volume = percent }
    }

    var isReady: Bool { condition.withLock { ready && !stopping } }

    var isStopping: Bool { condition.withLock { stopping } }

    var status: OutputStatus {
        condition.withLock {
            OutputStatus(
                state: stopping ? "stopped" : ready ? "playing" : "connecting",
                sink: ready && !stopping ? "fake" : nil, lastError: failure)
        }
    }

    func waitUntilReady() -> Bool {
        condition.withLock {
            while !ready && !stopping { condition.wait() }
            return !stopping
        }
    }

    private var wakeups = 0

    func wake() {
        condition.withLock {
            wakeups += 1
            condition.broadcast()
        }
    }

    func waitUntilReady(until deadline: Double) -> Bool {
        condition.withLock {
            let woken = wakeups
            while !ready && !stopping && wakeups == woken {
                let remaining = deadline - WallClock.monotonicSeconds()
                guard remaining > 0, condition.wait(until: Date(timeIntervalSinceNow: remaining)) else { break }
            }
            return ready && !stopping
        }
    }

    func beginUtterance() -> Utterance? {
        condition.withLock {
            while !ready && !stopping { condition.wait() }
            guard !stopping else { return nil }
            records.append(Record())
            return Utterance(session: session, serial: records.count)
        }
    }

    /// Whether `utterance` is the latest one, on the current "stream", and not cut. Lock held.
    private func isLive(_ utterance: Utterance) -> Bool {
        utterance.session == session && utterance.serial == records.count && utterance.serial > 0
            && !records[records.count - 1].cut
    }

    func write(_ samples: UnsafeBufferPointer<Int16>, for utterance: Utterance) -> Bool {
        condition.withLock {
            guard isLive(utterance), !stopping else { return false }
            if let limit = loseAfter, records[records.count - 1].samples + samples.count > limit {
                records[records.count - 1].samples = limit
                loseAfter = nil
                session += 1  // the stream is gone; the next utterance gets a new one
                return false
            }
            records[records.count - 1].samples += samples.count
            return true
        }
    }

    func endUtterance(_ utterance: Utterance) {
        condition.withLock {
            if isLive(utterance) { records[records.count - 1].ended = true }
        }
    }

    func waitUntilPlayed(_ utterance: Utterance) -> Bool {
        condition.withLock {
            guard isLive(utterance), !stopping, records[records.count - 1].ended else { return false }
            playedSerial = utterance.serial
            return true
        }
    }

    func cut(_ utterance: Utterance) {
        condition.withLock {
            guard utterance.serial == records.count, utterance.serial > 0, utterance.serial != playedSerial,
                  !records[records.count - 1].cut else { return }
            records[records.count - 1].cut = true
            condition.broadcast()
        }
    }

    func stop() {
        condition.withLock {
            stopping = true
            condition.broadcast()
        }
    }
}
