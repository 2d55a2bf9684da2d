/// How the keep-alive player talks to PulseAudio. Defaults suit a counter speaker.
public struct PlayerConfiguration: Sendable, Equatable {
    /// `application.name` of the client and stream.
    public var applicationName = "Bobao"
    /// `media.role` of the stream, for the server's volume and routing policies.
    public var mediaRole = "event"
    /// The sink to play on; nil for the server's default sink.
    public var sinkName: String?
    /// The server to connect to; nil for the usual lookup (`PULSE_SERVER`, then the user's server).
    public var serverAddress: String?
    /// eSpeak NG's output rate: the stream carries 16-bit mono at this rate, so nothing is resampled here.
    public var sampleRate = 22050
    /// How much silence the stream keeps queued while idle. A long buffer means few wake-ups for the client
    /// and the server; speech never waits behind it, because the queued silence is flushed when speech
    /// starts.
    public var idleBufferMilliseconds = 2000
    /// Silence between two announcements.
    public var gapMilliseconds = 300
    /// Leading samples quieter than this are dropped from each utterance (eSpeak begins with ~12 ms of
    /// near-silence that would only delay the first syllable).
    public var leadingSilenceThreshold: Int16 = 64
    /// Reconnection backoff: first delay and cap, in milliseconds.
    public var reconnectInitialMilliseconds = 100
    public var reconnectMaximumMilliseconds = 2000

    public init() {}

    var bytesPerSecond: Int { sampleRate * 2 }

    func bytes(milliseconds: Int) -> Int { bytesPerSecond * milliseconds / 1000 / 2 * 2 }
}
