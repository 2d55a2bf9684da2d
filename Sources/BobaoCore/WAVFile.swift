/// A RIFF/WAVE file holding 16-bit signed little-endian PCM.
public struct WAVFile: Sendable, Equatable {
    public var sampleRate: Int
    public var channels: Int
    public var samples: [Int16]

    public init(sampleRate: Int, channels: Int = 1, samples: [Int16]) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.samples = samples
    }

    /// Length of the audio in seconds.
    public var duration: Double {
        Double(samples.count) / Double(channels) / Double(sampleRate)
    }

    /// The whole file: a 44-byte canonical header followed by the samples.
    public func encoded() -> [UInt8] {
        let dataBytes = samples.count * 2
        var out: [UInt8] = []
        out.reserveCapacity(44 + dataBytes)
        func text(_ s: String) { out.append(contentsOf: Array(s.utf8)) }
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { out.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { out.append(contentsOf: $0) } }
        text("RIFF"); u32(36 + dataBytes); text("WAVE")
        text("fmt "); u32(16); u16(1); u16(channels); u32(sampleRate)
        u32(sampleRate * channels * 2); u16(channels * 2); u16(16)
        text("data"); u32(dataBytes)
        for sample in samples {
            withUnsafeBytes(of: sample.littleEndian) { out.append(contentsOf: $0) }
        }
        return out
    }

    /// Why a file could not be read, in words a log line can carry.
    public enum DecodingError: Error, Equatable, CustomStringConvertible {
        case notRIFFWAVE
        case missingChunk(String)
        case unsupportedFormat(String)
        /// The file ends before what its header promises.
        case truncated(String)
        /// The header contradicts itself or describes no audio.
        case malformed(String)
        /// More audio than `decodeMono16` accepts (`maximumDecodedSeconds`).
        case tooLong(seconds: Double)

        public var description: String {
            switch self {
            case .notRIFFWAVE: "not a RIFF/WAVE file"
            case .missingChunk(let id): "no \(id) chunk"
            case .unsupportedFormat(let why): "unsupported format: \(why)"
            case .truncated(let why): "truncated: \(why)"
            case .malformed(let why): "malformed: \(why)"
            case .tooLong(let seconds):
                "\((seconds * 10).rounded() / 10) s of audio, more than the \(Int(WAVFile.maximumDecodedSeconds)) s allowed"
            }
        }
    }

    /// Reads a 16-bit PCM RIFF/WAVE file, walking its chunks (so extra chunks such as LIST are skipped).
    public init(decoding bytes: [UInt8]) throws {
        func u32(_ at: Int) -> Int {
            Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func id(_ at: Int) -> String { String(decoding: bytes[at..<at + 4], as: UTF8.self) }
        guard bytes.count >= 12, id(0) == "RIFF", id(8) == "WAVE" else { throw DecodingError.notRIFFWAVE }
        var offset = 12
        var format: (channels: Int, rate: Int, bits: Int)?
        while offset + 8 <= bytes.count {
            let chunk = id(offset), size = u32(offset + 4), body = offset + 8
            guard body + size <= bytes.count else { break }
            if chunk == "fmt " {
                guard size >= 16 else { throw DecodingError.unsupportedFormat("short fmt chunk") }
                guard u16(body) == 1 else { throw DecodingError.unsupportedFormat("not PCM") }
                format = (u16(body + 2), u32(body + 4), u16(body + 14))
            } else if chunk == "data" {
                guard let format else { throw DecodingError.missingChunk("fmt ") }
                guard format.bits == 16 else { throw DecodingError.unsupportedFormat("\(format.bits)-bit") }
                var samples = [Int16](repeating: 0, count: size / 2)
                for i in 0..<samples.count {
                    samples[i] = Int16(bitPattern: UInt16(u16(body + 2 * i)))
                }
                self.init(sampleRate: format.rate, channels: format.channels, samples: samples)
                return
            }
            offset = body + size + (size & 1)
        }
        throw DecodingError.missingChunk(format == nil ? "fmt " : "data")
    }
}
