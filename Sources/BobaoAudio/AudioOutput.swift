/// Where the speaker's samples go: the keep-alive PulseAudio stream in the server, a fake in tests.
///
/// One utterance at a time, from one thread: `beginUtterance`, then `write` for each piece of audio, then
/// `endUtterance` once the message has ended, then `waitUntilPlayed`. An output that loses its device cuts
/// the utterance: `write` and `waitUntilPlayed` say so with `false`, and the caller says it again later.
public protocol AudioOutput: AnyObject, Sendable {
    /// Starts connecting; returns at once.
    func start()

    /// Whether the output can play now.
    var isReady: Bool { get }

    /// Whether `stop()` has been called (so a cut utterance was cut by the shutdown).
    var isStopping: Bool { get }

    /// Blocks until the output can play, or it stops. Returns whether it can play.
    func waitUntilReady() -> Bool

    /// Starts an utterance; nil if the output is stopping. Keep what runs between this and the first
    /// `write` short: the listener hears that time as latency.
    func beginUtterance() -> Utterance?

    /// Plays 16-bit mono samples at the output's rate, waiting while its buffer is full. Returns false if
    /// the utterance was cut (the device went away, or the output stopped).
    @discardableResult
    func write(_ samples: UnsafeBufferPointer<Int16>, for utterance: Utterance) -> Bool

    /// The last sample of the utterance has been written (or it was cancelled).
    func endUtterance(_ utterance: Utterance)

    /// Blocks until everything written for the utterance has been heard. Returns false if it was cut first.
    func waitUntilPlayed(_ utterance: Utterance) -> Bool

    /// Stops for good; an utterance being written is cut.
    func stop()
}

/// A token for one utterance, from `AudioOutput.beginUtterance`; pass it back to the other calls.
public struct Utterance: Sendable, Hashable {
    /// Which device session the utterance started in: a later session means it was cut.
    public let session: Int

    public init(session: Int) {
        self.session = session
    }
}
