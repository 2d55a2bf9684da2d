/// How an announcement is spoken. Ranges follow eSpeak NG's own.
public struct SpeechParameters: Sendable, Equatable {
    /// A voice name: `voices/NAME` of the project first, then eSpeak NG's built-in voices.
    public var voice: String
    /// Words per minute, 80...450.
    public var rate: Int
    /// Base pitch, 0...99.
    public var pitch: Int
    /// Volume in percent, 0...200 (100 is eSpeak's normal).
    public var volume: Int

    public init(voice: String = "zh", rate: Int = 175, pitch: Int = 50, volume: Int = 100) {
        self.voice = voice
        self.rate = rate
        self.pitch = pitch
        self.volume = volume
    }

    public static let rateRange = 80...450
    public static let pitchRange = 0...99
    public static let volumeRange = 0...200

    public enum Invalid: Error, Equatable, CustomStringConvertible {
        case rate(Int), pitch(Int), volume(Int)

        public var description: String {
            switch self {
            case .rate(let v): "rate \(v) is outside \(SpeechParameters.rateRange) words per minute"
            case .pitch(let v): "pitch \(v) is outside \(SpeechParameters.pitchRange)"
            case .volume(let v): "volume \(v) is outside \(SpeechParameters.volumeRange)"
            }
        }
    }

    /// Throws the first parameter that is out of range.
    public func validate() throws(Invalid) {
        guard Self.rateRange.contains(rate) else { throw .rate(rate) }
        guard Self.pitchRange.contains(pitch) else { throw .pitch(pitch) }
        guard Self.volumeRange.contains(volume) else { throw .volume(volume) }
    }
}
