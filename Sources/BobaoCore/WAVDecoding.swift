// Reading WAV files that users supply (chimes): any common PCM layout, mixed down to 16-bit mono, and
// resampled to the player's rate. The bytes are untrusted: every size in the header is checked against
// what is actually there before it is used, and the audio is capped at `maximumDecodedSeconds`.
extension WAVFile {
    /// The longest audio `decodeMono16` accepts, in seconds.
    public static let maximumDecodedSeconds = 10.0

    /// Sample rates `decodeMono16` accepts, in Hz.
    public static let decodableRates = 1000...384_000

    /// Decodes a RIFF/WAVE file of integer PCM (8-bit unsigned, 16-, 24- or 32-bit signed) or IEEE float
    /// (32- or 64-bit), plain or `WAVE_FORMAT_EXTENSIBLE`, mono or stereo (the channels are averaged), into
    /// 16-bit mono samples at the file's rate. Chunks other than `fmt ` and `data` are skipped. A file that
    /// ends early, contradicts itself, holds no audio or more than `maximumDecodedSeconds` of it is refused
    /// with an error that says which.
    public static func decodeMono16(_ bytes: [UInt8]) throws(DecodingError) -> (sampleRate: Int, samples: [Int16]) {
        let reader = LittleEndianBytes(bytes: bytes)
        guard bytes.count >= 12, reader.tag(at: 0) == "RIFF", reader.tag(at: 8) == "WAVE" else {
            throw .notRIFFWAVE
        }
        // The RIFF size is not trusted either: the chunks are walked up to the real end of the bytes.
        var format: PCMLayout?
        var data: Range<Int>?
        var offset = 12
        while offset + 8 <= bytes.count && (format == nil || data == nil) {
            let tag = reader.tag(at: offset), size = reader.u32(at: offset + 4), body = offset + 8
            let available = bytes.count - body
            guard size <= available else {
                throw .truncated("the '\(tag)' chunk declares \(size) bytes; only \(available) follow")
            }
            if tag == "fmt " && format == nil {
                format = try PCMLayout(reader, at: body, size: size)
            } else if tag == "data" && data == nil {
                data = body..<body + size
            }
            offset = body + size + (size & 1)
        }
        guard let format else { throw .missingChunk("fmt ") }
        guard let data else { throw .missingChunk("data") }
        guard data.count % format.frameBytes == 0 else {
            throw .truncated("the data chunk's \(data.count) bytes end partway through a \(format.frameBytes)-byte frame")
        }
        let frames = data.count / format.frameBytes
        guard frames > 0 else { throw .malformed("the data chunk holds no audio") }
        let seconds = Double(frames) / Double(format.sampleRate)
        guard seconds <= maximumDecodedSeconds else { throw .tooLong(seconds: seconds) }

        var samples = [Int16](repeating: 0, count: frames)
        let sampleBytes = format.frameBytes / format.channels
        for frame in 0..<frames {
            let start = data.lowerBound + frame * format.frameBytes
            var sum = 0
            for channel in 0..<format.channels {
                sum += format.sample(reader, at: start + channel * sampleBytes)
            }
            samples[frame] = Int16(sum / format.channels)
        }
        return (format.sampleRate, samples)
    }

    /// `samples` at rate `source` resampled to rate `target` by linear interpolation (enough for chimes:
    /// content above the lower rate's Nyquist frequency aliases rather than being filtered out). The length
    /// scales with the rates, rounded. Rates that are not positive leave the samples as they are.
    public static func resample(_ samples: [Int16], from source: Int, to target: Int) -> [Int16] {
        guard source > 0, target > 0, source != target, !samples.isEmpty else { return samples }
        let count = max(1, (samples.count * target + source / 2) / source)
        let step = Double(source) / Double(target)
        let last = samples.count - 1
        var resampled = [Int16](repeating: 0, count: count)
        for i in 0..<count {
            let position = Double(i) * step
            let index = min(Int(position), last)
            let fraction = position - Double(index)
            let a = Double(samples[index]), b = Double(samples[min(index + 1, last)])
            resampled[i] = Int16(max(-32768, min(32767, (a + (b - a) * fraction).rounded())))
        }
        return resampled
    }
}

/// What a `fmt ` chunk says, once checked: enough to turn each sample of the data chunk into a 16-bit value.
private struct PCMLayout {
    enum Encoding { case integer, float }

    let encoding: Encoding
    let channels: Int
    let sampleRate: Int
    let bits: Int
    var frameBytes: Int { channels * bits / 8 }

    init(_ reader: LittleEndianBytes, at body: Int, size: Int) throws(WAVFile.DecodingError) {
        guard size >= 16 else { throw .malformed("a fmt chunk of \(size) bytes (at least 16 are needed)") }
        var tag = reader.u16(at: body)
        if tag == 0xFFFE {  // WAVE_FORMAT_EXTENSIBLE: the real format is the first field of the sub-format GUID
            guard size >= 40 else { throw .malformed("an extensible fmt chunk of \(size) bytes (40 are needed)") }
            tag = reader.u16(at: body + 24)
        }
        switch tag {
        case 1: encoding = .integer
        case 3: encoding = .float
        default: throw .unsupportedFormat("format tag \(tag) (compressed audio; only PCM and IEEE float are read)")
        }
        channels = reader.u16(at: body + 2)
        sampleRate = reader.u32(at: body + 4)
        bits = reader.u16(at: body + 14)
        let blockAlign = reader.u16(at: body + 12)
        guard channels > 0 else { throw .malformed("0 channels") }
        guard channels <= 2 else { throw .unsupportedFormat("\(channels) channels (mono or stereo only)") }
        guard WAVFile.decodableRates.contains(sampleRate) else {
            throw .unsupportedFormat("a sample rate of \(sampleRate) Hz (\(WAVFile.decodableRates) only)")
        }
        switch (encoding, bits) {
        case (.integer, 8), (.integer, 16), (.integer, 24), (.integer, 32), (.float, 32), (.float, 64): break
        case (.integer, _): throw .unsupportedFormat("\(bits)-bit integer PCM (8, 16, 24 or 32 only)")
        case (.float, _): throw .unsupportedFormat("\(bits)-bit float (32 or 64 only)")
        }
        guard blockAlign == frameBytes else {
            throw .malformed("a block align of \(blockAlign) for \(channels) channel(s) of \(bits) bits")
        }
    }

    /// The sample at `offset`, scaled to 16 bits.
    func sample(_ reader: LittleEndianBytes, at offset: Int) -> Int {
        switch (encoding, bits) {
        case (.integer, 8): return (Int(reader.bytes[offset]) - 128) << 8
        case (.integer, 16): return Int(Int16(truncatingIfNeeded: reader.u16(at: offset)))
        case (.integer, 24):
            let value = reader.u16(at: offset) | Int(reader.bytes[offset + 2]) << 16
            return ((value ^ 0x80_0000) - 0x80_0000) >> 8  // sign-extended, then the top 16 bits
        case (.integer, _): return Int(Int32(truncatingIfNeeded: reader.u32(at: offset)) >> 16)
        case (.float, 32): return Self.scaled(Double(Float(bitPattern: UInt32(reader.u32(at: offset)))))
        case (.float, _): return Self.scaled(Double(bitPattern: reader.u64(at: offset)))
        }
    }

    private static func scaled(_ value: Double) -> Int {
        value.isNaN ? 0 : Int((min(1, max(-1, value)) * 32767).rounded())
    }
}

/// Little-endian reads from a byte array; callers keep every offset inside it.
private struct LittleEndianBytes {
    let bytes: [UInt8]

    func u16(at offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
    func u32(at offset: Int) -> Int { u16(at: offset) | u16(at: offset + 2) << 16 }
    func u64(at offset: Int) -> UInt64 { UInt64(u32(at: offset)) | UInt64(u32(at: offset + 4)) << 32 }

    /// A chunk's four-character code, with anything unprintable shown as `?`.
    func tag(at offset: Int) -> String {
        String(decoding: bytes[offset..<offset + 4].map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") },
               as: UTF8.self)
    }
}
