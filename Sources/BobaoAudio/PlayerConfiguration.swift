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
    /// The buffer the stream asks for while announcements are spoken (and `idleCloseMilliseconds` after): the
    /// sink then renders ~25 ms ahead of what is heard instead of ~750 ms, so what it renders (and a monitor
    /// records) has the same gaps as what is heard.
    public var speechBufferMilliseconds = 100
    /// Silence between two announcements.
    public var gapMilliseconds = 300
    /// What the stream plays between announcements (`--keepalive`).
    public var keepAlive = KeepAliveMode.silence
    /// With `--keepalive off`, the stream closes after this long without speech.
    public var idleCloseMilliseconds = 2000
    /// The peak level of `--keepalive noise`, in dBFS (`--keepalive-level`).
    public var keepAliveLevelDBFS = -60.0
    /// Leading and trailing samples quieter than this are dropped from each utterance: eSpeak begins with
    /// ~12 ms of near-silence that would only delay the first syllable, and ends a Mandarin sentence with
    /// ~300 ms of it that would lengthen every `--gap`.
    public var silenceThreshold: Int16 = 64
    /// The longest run of quiet samples held back inside an utterance until louder ones follow (or the
    /// utterance ends, and they are dropped); a longer pause (a repeat's) is written as it comes.
    public var heldQuietMilliseconds = 1000
    /// Reconnection backoff: first delay and cap, in milliseconds.
    public var reconnectInitialMilliseconds = 100
    public var reconnectMaximumMilliseconds = 2000
    /// How often the player's `heartbeat` runs on its main loop thread (systemd's watchdog ping: half of
    /// `WatchdogSec=`); nil for never. A stalled main loop misses its heartbeats.
    public var heartbeatMilliseconds: Int?

    public init() {}

    var bytesPerSecond: Int { sampleRate * 2 }

    func bytes(milliseconds: Int) -> Int { bytesPerSecond * milliseconds / 1000 / 2 * 2 }
}

/// What keeps the sink awake between announcements.
public enum KeepAliveMode: String, Sendable, Equatable, CaseIterable {
    /// Digital silence: the sink never suspends (the default).
    case silence
    /// Very faint noise, for amplifiers and active speakers that switch off on digital silence.
    case noise
    /// Nothing: the stream closes when idle, and the sink may suspend.
    case off
}
