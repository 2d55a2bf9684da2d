import BobaoAudio
import Foundation

/// An audio output for the speaker's tests: counts what each utterance was given, plays instantly, and
/// can lose its "stream" partway through an utterance, as a sound server that dies does.
final class FakeAudioOutput: AudioOutput, @unchecked Sendable {
    struct Record: Equatable {
        var samples = 0
        var ended = false
    }

    private let condition = NSCondition()
    private var session = 0
    private var stopping = false
    private var records: [Record] = []
    /// Set by `loseStream(afterSamples:)`: the next utterance is cut once it has been given this many.
    private var loseAfter: Int?

    /// One record per utterance begun, in order.
    var utterances: [Record] { condition.withLock { records } }

    /// The utterance in progress (or the next) is cut once it has been given `samples` samples; the
    /// output is ready again at once, as after a quick reconnection.
    func loseStream(afterSamples samples: Int) {
        condition.withLock { loseAfter = samples }
    }

    func start() {}
    // TODO(issue 9): real implementations.
    func waitUntilReady(until deadline: Double) -> Bool { waitUntilReady() }
    func cut(_ utterance: Utterance) {}
    var status: OutputStatus { OutputStatus(state: "playing") }

    var isReady: Bool { condition.withLock { !stopping } }

    var isStopping: Bool { condition.withLock { stopping } }

    func waitUntilReady() -> Bool { !isStopping }

    func beginUtterance() -> Utterance? {
        condition.withLock {
            guard !stopping else { return nil }
            records.append(Record())
            return Utterance(session: session)
        }
    }

    func write(_ samples: UnsafeBufferPointer<Int16>, for utterance: Utterance) -> Bool {
        condition.withLock {
            guard utterance.session == session, !stopping else { return false }
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
            if utterance.session == session { records[records.count - 1].ended = true }
        }
    }

    func waitUntilPlayed(_ utterance: Utterance) -> Bool {
        condition.withLock { utterance.session == session && !stopping && records[records.count - 1].ended }
    }

    func stop() {
        condition.withLock { stopping = true }
    }
}
