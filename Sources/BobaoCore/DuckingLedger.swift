#if canImport(Glibc)
import Glibc
#endif

/// One playback stream Bobao lowered while it spoke: enough to put its volume back after a crash, and to
/// recognise that the stream is still the one lowered and still at a volume Bobao set.
///
/// Volumes are PulseAudio's `pa_volume_t`, one a channel (65536 is 100 %, what `pactl` shows as a percentage).
public struct DuckedStream: Sendable, Equatable {
    /// The sink input's index on that sound server.
    public var index: UInt32
    /// Which sound server instance (name, host and cookie): indices mean nothing on another one.
    public var server: String
    /// Who owns the stream (process id, binary, application name): PipeWire reuses indices, and a stream
    /// of another program under a reused index must be left alone.
    public var owner: String
    /// Its volume before Bobao lowered it.
    public var original: [UInt32]
    /// The volume Bobao lowered it to.
    public var ducked: [UInt32]

    public init(index: UInt32, server: String, owner: String, original: [UInt32], ducked: [UInt32]) {
        self.index = index
        self.server = server
        self.owner = owner
        self.original = original
        self.ducked = ducked
    }
}

/// The ducking state file's format and the arithmetic of ducking: what a lowered volume is, the steps of a
/// ramp, and whether a stream's volume is still one Bobao set (so restoring it clobbers nobody's change).
///
/// The file is text: a header line, then one line a stream, fields separated by tabs, strings
/// percent-encoded. A damaged line is skipped (and counted), never trusted.
public enum DuckingLedger {
    /// `pa_volume_t` of 100 %.
    public static let normal: UInt32 = 0x10000
    /// The largest volume PulseAudio accepts (`PA_VOLUME_MAX`).
    public static let maximumVolume: UInt32 = UInt32.max / 2
    /// Two volumes this close (0.5 %, per channel) are the same: sound servers round what they are told
    /// (PipeWire keeps volumes as floats), and a person's change is never that small.
    public static let tolerance: UInt32 = normal / 200
    /// At most this many streams are kept; a file with more lines is read only that far.
    public static let maximumStreams = 1024
    public static let maximumChannels = 32
    static let header = "bobao-ducking 1"

    // MARK: Volumes

    /// `volume` lowered by `factor` (0…1) on PulseAudio's scale: 0.3 of 100 % is 30 % as `pactl` shows it.
    public static func ducked(_ volume: [UInt32], factor: Double) -> [UInt32] {
        let factor = min(max(factor.isNaN ? 1 : factor, 0), 1)
        return volume.map { UInt32((Double($0) * factor).rounded()) }
    }

    /// The volumes of a ramp from `from` to `to` in `steps` steps: the first step's volume first, `to` last.
    /// The steps are equal in decibels (geometric on PulseAudio's cubic scale), so each sounds as large as
    /// the others; a channel that starts or ends at 0 moves in equal volume steps instead.
    public static func ramp(from: [UInt32], to: [UInt32], steps: Int) -> [[UInt32]] {
        guard from.count == to.count, steps > 1 else { return [to] }
        return (1...steps).map { step in
            let fraction = Double(step) / Double(steps)
            return zip(from, to).map { start, end in
                if step == steps { return end }
                let (a, b) = (Double(start), Double(end))
                let value = a > 0 && b > 0 ? a * pow(b / a, fraction) : a + (b - a) * fraction
                return UInt32(value.rounded())
            }
        }
    }

    /// Whether `volume` is, channel by channel, within `tolerance` of `other` (different channel counts
    /// compare their averages: a server may report another layout than the one set).
    public static func same(_ volume: [UInt32], _ other: [UInt32]) -> Bool {
        guard !volume.isEmpty, !other.isEmpty else { return volume.isEmpty && other.isEmpty }
        if volume.count != other.count { return same([average(volume)], [average(other)]) }
        return zip(volume, other).allSatisfy { max($0, $1) - min($0, $1) <= tolerance }
    }

    /// Whether `volume` is one of `candidates`.
    public static func isOneOf(_ volume: [UInt32], _ candidates: [[UInt32]]) -> Bool {
        candidates.contains { same(volume, $0) }
    }

    /// The volumes a stream may have been left at by a Bobao that stopped without restoring it: lowered,
    /// or somewhere on the ramp down from its original volume (it may have died mid-ramp).
    public static func volumesSet(for stream: DuckedStream, rampSteps: Int) -> [[UInt32]] {
        [stream.ducked] + ramp(from: stream.original, to: stream.ducked, steps: rampSteps)
    }

    static func average(_ volume: [UInt32]) -> UInt32 {
        UInt32(volume.reduce(UInt64(0)) { $0 + UInt64($1) } / UInt64(max(volume.count, 1)))
    }

    // MARK: The file

    public static func encode(_ streams: [DuckedStream]) -> String {
        var text = header + "\n"
        for stream in streams.prefix(maximumStreams) {
            let fields = [
                String(stream.index), escape(stream.server), escape(stream.owner),
                stream.original.map(String.init).joined(separator: ","),
                stream.ducked.map(String.init).joined(separator: ","),
            ]
            text += fields.joined(separator: "\t") + "\n"
        }
        return text
    }

    /// What a state file holds, and how many of its lines were damaged (skipped). A file that does not
    /// start with the header is damaged as a whole: `nil`.
    public static func decode(_ text: String) -> (streams: [DuckedStream], damaged: Int)? {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard lines.first.map(String.init) == header else { return nil }
        lines.removeFirst()
        var streams: [DuckedStream] = [], damaged = 0
        for line in lines {
            guard streams.count < maximumStreams else { damaged += 1; continue }
            if let stream = decodeLine(line) { streams.append(stream) } else { damaged += 1 }
        }
        return (streams, damaged)
    }

    static func decodeLine(_ line: Substring) -> DuckedStream? {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        guard fields.count == 5, let index = UInt32(fields[0]),
              let server = unescape(fields[1]), let owner = unescape(fields[2]),
              let original = volume(fields[3]), let ducked = volume(fields[4]),
              original.count == ducked.count else { return nil }
        return DuckedStream(index: index, server: server, owner: owner, original: original, ducked: ducked)
    }

    static func volume(_ field: Substring) -> [UInt32]? {
        let parts = field.split(separator: ",", omittingEmptySubsequences: false)
        guard (1...maximumChannels).contains(parts.count) else { return nil }
        var values: [UInt32] = []
        for part in parts {
            guard part.utf8.count <= 10, let value = UInt32(part), value <= maximumVolume else { return nil }
            values.append(value)
        }
        return values
    }

    /// Printable ASCII but `%` stays; everything else (tabs, newlines, non-ASCII) becomes `%XX` per byte.
    static func escape(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            if byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "%") {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }

    static func unescape(_ field: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = field.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte > 0x20 && byte < 0x7F else { return nil }
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next(), let low = iterator.next(),
                  let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
