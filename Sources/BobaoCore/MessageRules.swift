/// What a JSON announcement may ask for beyond the protocol's own ranges: the voices and chimes the server
/// has. A name outside a configured set is refused when the line arrives, not when it is spoken.
public struct MessageRules: Sendable, Equatable {
    /// The voices `"voice"` may name; nil takes any plausible name (see `isPlausibleName`).
    public var voices: Set<String>?
    /// The chimes `"chime"` may name (the built-in `ding` among them, if the server has it); nil takes any
    /// plausible name.
    public var chimes: Set<String>?

    public init(voices: Set<String>? = nil, chimes: Set<String>? = nil) {
        self.voices = voices
        self.chimes = chimes
    }

    /// `"ttl"` at most, in seconds: 30 days, as `bobao serve --ttl`.
    public static let maximumTTLSeconds = 2_592_000.0
    /// `"max_speech"` at most, in seconds, as `bobao serve --max-speech`.
    public static let maximumSpeechSeconds = 3600.0
    /// `"ttl"`: a millisecond (the spool's unit) to 30 days.
    public static let ttlRange = 0.001...maximumTTLSeconds
    /// `"max_speech"`: a tenth of a second (less is no speech at all) to an hour.
    public static let speechRange = 0.1...maximumSpeechSeconds
    /// `"id"` at most, in UTF-8 bytes.
    public static let maximumIDBytes = 128
    /// A voice's or chime's name at most, in bytes.
    public static let maximumNameBytes = 64

    /// Whether `name` could be a voice or chime: ASCII letters, digits and `-_+.`, not starting with `.`, at
    /// most `maximumNameBytes` (the rule of `VoiceCatalog.isValidName`). Names become file names
    /// (`voices/NAME`), so nothing else passes: no `/`, no `..`.
    public static func isPlausibleName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, first != UInt8(ascii: "."), bytes.count <= maximumNameBytes else { return false }
        return bytes.allSatisfy { isAlphanumeric($0) || "-_+.".utf8.contains($0) }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
