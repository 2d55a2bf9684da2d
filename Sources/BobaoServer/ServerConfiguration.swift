import BobaoAudio
import BobaoCore

/// Everything `bobao serve` can be told, with its defaults.
public struct ServerConfiguration: Sendable {
    /// Where to listen; loopback by default (port 0 picks a free port).
    public var listen = ListenAddress(host: "127.0.0.1", port: ListenAddress.defaultPort)
    /// Where to serve HTTP (`--http`): webhooks, the web console, metrics; nil (the default) serves none.
    public var http: ListenAddress?
    /// The MQTT broker to take announcements from (`--mqtt`), and the node's topics; nil (the default): none.
    public var mqtt: MQTTSettings?
    /// Voice, rate, pitch and volume of every announcement.
    public var speech = SpeechParameters()
    /// How many accepted announcements may wait; the next gets `ERR queue-full`.
    public var queueCapacity = 256
    /// The longest line accepted, in bytes.
    public var maximumLineBytes = 4096
    /// Open connections at most; the next one is answered `ERR busy` and closed.
    public var maximumConnections = 512
    /// A connection that sends nothing for this long is closed.
    public var idleTimeoutSeconds = 60.0
    /// Lines a second one peer address may send after its burst; 0 turns the limit off.
    public var linesPerSecondPerPeer = 20.0
    /// Lines one peer address may send at once.
    public var burstPerPeer = 40.0
    /// Whether loopback clients (the box's own POS software, `bobao say`) are rate-limited too.
    public var rateLimitLoopback = false
    /// One announcement that would speak longer than this is cut, and the log says so.
    public var maximumSpeechSeconds = 60.0
    /// The SQLite file accepted announcements are kept in until spoken; nil keeps them in memory only.
    public var spoolPath: String?
    /// An announcement whose turn comes later than this after it was accepted is dropped, not spoken late.
    public var ttlSeconds = 120.0
    /// On SIGTERM, how long the announcement being spoken may take to finish; then it is cut (and stays in
    /// the spool to be said after the next start).
    public var shutdownTimeoutSeconds = 5.0
    /// Who may connect: loopback by default; a token and/or address ranges beyond it.
    public var access = AccessPolicy()
    /// The PulseAudio side: sink, buffer sizes, gap, reconnection backoff.
    public var player = PlayerConfiguration()
    /// The chime an announcement asks for, as samples at the synthesizer's rate (`.serverDefault` and `.on`
    /// resolved with `--chime`); nil for none.
    public var chime: @Sendable (ChimeChoice) -> [Int16]? = { _ in nil }
    /// What the voice and chime a JSON message names must be (nil sets: any plausible name).
    public var messageRules = MessageRules()
    /// Other streams on Bobao's sink play at this factor of their volume while it speaks (`--duck`); 1 is off.
    public var duckFactor = 0.3
    /// The encoding clients send in (`--encoding`); lines are converted to UTF-8 before anything else.
    public var encoding = TextEncoding.utf8

    public init() {}
}
