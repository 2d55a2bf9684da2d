import BobaoCore

/// What a synthesizer hands to its consumer, on the synthesizer's own thread.
public enum SynthesisEvent {
    /// 16-bit mono PCM at `sampleRate`; valid only during the call.
    case audio(UnsafeBufferPointer<Int16>)
    /// The message is over. `cancelled` is false when it came from the engine's end-of-message
    /// callback, true when Bobao stopped the message early.
    case end(cancelled: Bool)
}

/// How a message ended.
public enum SynthesisOutcome: Sendable, Equatable {
    case completed
    case cancelled
}

public enum SpeechError: Error, Equatable, CustomStringConvertible {
    case engineUnavailable(String)
    case unknownVoice(String)
    /// A voice that cannot be had: the voices folder named (`BOBAO_VOICES`) is not there, or the voice built
    /// into the program could not be written where eSpeak NG loads it.
    case voiceUnavailable(voice: String, reason: String)
    case emptyText
    case invalidParameters(String)
    case synthesisFailed(code: Int32)

    public var description: String {
        switch self {
        case .engineUnavailable(let why): "eSpeak NG could not start: \(why)"
        case .unknownVoice(let name): "unknown voice '\(name)' (see `bobao voices`)"
        case .voiceUnavailable(let name, let reason): "voice '\(name)' unavailable: \(reason)"
        case .emptyText: "empty text: nothing to say"
        case .invalidParameters(let why): why
        case .synthesisFailed(let code): "eSpeak NG failed to synthesize (error \(code))"
        }
    }
}

/// Text in, PCM out. One message at a time; `cancel()` may be called from any thread.
public protocol Synthesizer: Sendable {
    var sampleRate: Int { get }

    /// Synthesizes `text` and blocks until the message has ended; `onEvent` runs on the engine's thread
    /// and receives the audio and then exactly one `.end`.
    /// - Throws: `SpeechError` for an unknown voice, empty text, bad parameters or an engine failure.
    @discardableResult
    func synthesize(
        _ text: String,
        parameters: SpeechParameters,
        onEvent: @escaping @Sendable (SynthesisEvent) -> Void
    ) throws(SpeechError) -> SynthesisOutcome

    /// Stops the message in progress, if any; its `.end(cancelled: true)` follows.
    func cancel()
}
