/// How soon an announcement is spoken.
public enum Priority: String, Sendable, CaseIterable, Comparable {
    /// Cuts in: the announcement being spoken stops and is said again, from its start, after the urgent ones.
    case urgent
    /// First in, first out.
    case normal
    /// Spoken only when nothing else waits; dropped when newer normal or urgent work arrives while it waits.
    case low

    public static func < (a: Priority, b: Priority) -> Bool { a.rank < b.rank }

    var rank: Int {
        switch self {
        case .urgent: 0
        case .normal: 1
        case .low: 2
        }
    }
}

/// Whether a chime plays before the speech.
public enum ChimeChoice: Sendable, Equatable {
    /// The server's `--chime` (none unless set).
    case serverDefault
    case off
    /// `"chime": true`: the server's `--chime` if it names one, else the built-in two-tone chime.
    case on
    /// A chime by name: the built-in `ding`, or `voices/chimes/NAME.wav`.
    case named(String)
}

/// What one announcement asks for beyond its text. Every nil (or `.serverDefault`) takes the `bobao serve`
/// setting when the announcement is spoken.
public struct MessageOptions: Sendable, Equatable {
    public var priority: Priority = .normal
    /// Times the text is said, 1...5, with a pause between.
    public var repeatCount = 1
    public var chime: ChimeChoice = .serverDefault
    public var voice: String?
    public var rate: Int?
    public var pitch: Int?
    /// 0...100; the speech (and chime) amplitude in percent, as eSpeak NG's volume (100 is its normal).
    public var volume: Int?
    /// The client's key for this message: a second message with the same key within 10 minutes is answered
    /// `OK <n> duplicate` and not spoken.
    public var clientID: String?
    /// Seconds it may wait for its turn; nil for `--ttl`.
    public var ttlSeconds: Double?
    /// Seconds of speech before it is cut; nil for `--max-speech`.
    public var maximumSpeechSeconds: Double?

    public init() {}

    public static let repeatRange = 1...5
    public static let messageVolumeRange = 0...100
    /// How long a client key is remembered.
    public static let duplicateWindowSeconds = 600.0
}

/// An announcement as a client asked for it, before it is accepted.
public struct Submission: Sendable, Equatable {
    public var text: String
    public var options: MessageOptions
    /// `"wait": true`: the connection receives the message's events (`start`, then its outcome).
    public var wait: Bool

    public init(text: String, options: MessageOptions = MessageOptions(), wait: Bool = false) {
        self.text = text
        self.options = options
        self.wait = wait
    }
}

/// A JSON command line: `{"cmd": "..."}`.
public enum ClientCommand: Sendable, Equatable {
    public enum Target: Sendable, Equatable {
        /// A client key, or (when no waiting or speaking message has that key) a message number.
        case id(String)
        /// Everything waiting and the one speaking.
        case all
    }

    /// Removes a waiting message, or stops the one speaking.
    case cancel(Target)
    /// Stops the one speaking now; the next one follows.
    case skip
    /// Removes everything waiting (not the one speaking).
    case clear
    /// One JSON line about the server.
    case status
    /// `{"cmd": "volume", "value": 70}` sets Bobao's own stream volume (kept across restarts in the spool);
    /// `{"cmd": "volume"}` (nil) asks for it.
    case volume(Int?)

    /// The stream volume a client may set, in percent of the sound server's normal volume.
    public static let volumeRange = 0...100
}
