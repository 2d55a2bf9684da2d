import BobaoCore
import BobaoSpeech
import Foundation

/// A synthesizer for the speaker's tests: each character of the text becomes `samplesPerCharacter`
/// loud samples at 1000 Hz, delivered in pieces of `chunk` on the calling thread. `cancel()` ends the
/// message before the next piece, as eSpeak does.
final class FakeSynthesizer: Synthesizer, @unchecked Sendable {
    let sampleRate = 1000
    let samplesPerCharacter: Int
    let chunk: Int
    /// Runs before each piece with the text and the piece's index; a test can block it there.
    let beforeChunk: @Sendable (String, Int) -> Void

    private let lock = NSLock()
    private var cancelRequested = false
    private var texts: [String] = []
    private var delivered = 0

    init(samplesPerCharacter: Int = 100, chunk: Int = 50, beforeChunk: @escaping @Sendable (String, Int) -> Void = { _, _ in }) {
        self.samplesPerCharacter = samplesPerCharacter
        self.chunk = chunk
        self.beforeChunk = beforeChunk
    }

    /// Every text synthesized, in order.
    var synthesized: [String] { lock.withLock { texts } }
    /// Samples handed out over all messages.
    var samplesDelivered: Int { lock.withLock { delivered } }

    func synthesize(
        _ text: String, parameters: SpeechParameters, onEvent: @escaping @Sendable (SynthesisEvent) -> Void
    ) throws(SpeechError) -> SynthesisOutcome {
        lock.withLock {
            cancelRequested = false
            texts.append(text)
        }
        let total = text.count * samplesPerCharacter
        let piece = [Int16](repeating: 8000, count: chunk)
        var index = 0
        for start in stride(from: 0, to: total, by: chunk) {
            beforeChunk(text, index)
            index += 1
            if lock.withLock({ cancelRequested }) {
                onEvent(.end(cancelled: true))
                return .cancelled
            }
            let count = min(chunk, total - start)
            lock.withLock { delivered += count }
            piece.withUnsafeBufferPointer { onEvent(.audio(UnsafeBufferPointer(rebasing: $0[..<count]))) }
        }
        if lock.withLock({ cancelRequested }) {
            onEvent(.end(cancelled: true))
            return .cancelled
        }
        onEvent(.end(cancelled: false))
        return .completed
    }

    func cancel() {
        lock.withLock { cancelRequested = true }
    }
}
