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

    /// Blocks until the output can play, it stops, or `deadline` (on `WallClock.monotonicSeconds()`'s
    /// clock) passes. Returns whether it can play.
    func waitUntilReady(until deadline: Double) -> Bool

    /// Makes a `waitUntilReady(until:)` in progress return now (with whether the output is ready): the
    /// announcement it waits for was cancelled. Any thread.
    func wake()

    /// Cuts the utterance now, from any thread: what was written for it and not yet heard is dropped (the
    /// sound stops within milliseconds), silence resumes at once (no `--gap` before the next utterance), and
    /// `write` and `waitUntilPlayed` return false for it. Does nothing for an utterance already played.
    func cut(_ utterance: Utterance)

    /// The sound server's state and the sink, for `status`.
    var status: OutputStatus { get }

    /// Sets the output's own stream volume (0–100 % of the sound server's normal volume; what `pactl`
    /// shows as the stream's percentage), now and whenever the stream is opened again. Any thread.
    func setVolume(percent: Int)

    /// Stops for good; an utterance being written is cut.
    func stop()
}

/// What `status` says about the output.
public struct OutputStatus: Sendable, Equatable {
    /// `playing` (the stream is open), `idle` (`--keepalive off`: connected, the stream closed until there is
    /// something to say), `connecting` (waiting for the sound server), `no-sink` (the server is there but the
    /// sink is not: `--sink NAME` is missing, or it has no sink at all), `corked` (the server asked the stream
    /// to cork, or suspended its sink: announcements wait) or `stopped`.
    public var state: String
    /// The sink the stream plays to, once known; the one asked for (`--sink`) while there is no stream.
    public var sink: String?
    /// The sinks the sound server has, as last listed; nil before the first listing.
    public var sinks: [String]?
    /// Why it is not playing, for `no-sink` (`no sink 'usb' (sinks: a, b)`) and `corked`.
    public var reason: String?
    /// The last failure of the sound server connection, if any since the start.
    public var lastError: String?

    public init(
        state: String, sink: String? = nil, sinks: [String]? = nil, reason: String? = nil, lastError: String? = nil
    ) {
        self.state = state
        self.sink = sink
        self.sinks = sinks
        self.reason = reason
        self.lastError = lastError
    }
}

/// A token for one utterance, from `AudioOutput.beginUtterance`; pass it back to the other calls.
public struct Utterance: Sendable, Hashable {
    /// Which device session the utterance started in: a later session means it was cut.
    public let session: Int
    /// Counts utterances, so a `cut` meant for one never reaches a later one.
    public let serial: Int

    public init(session: Int, serial: Int = 0) {
        self.session = session
        self.serial = serial
    }
}
