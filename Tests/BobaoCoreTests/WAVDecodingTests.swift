import BobaoCore
import BobaoTestSupport
import Foundation
import Testing

/// Decoding the WAV files users drop in as chimes: the formats read, the files refused and why.
struct WAVDecodingTests {
    typealias DecodingError = WAVFile.DecodingError

    static func le(_ value: Int, bytes count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    static func chunk(_ tag: String, _ body: [UInt8], declaring size: Int? = nil) -> [UInt8] {
        Array(tag.utf8) + le(size ?? body.count, bytes: 4) + body + (body.count % 2 == 1 ? [0] : [])
    }

    static func fmt(tag: Int = 1, channels: Int = 1, rate: Int = 8000, bits: Int = 16, blockAlign: Int? = nil) -> [UInt8] {
        let align = blockAlign ?? channels * bits / 8
        return chunk("fmt ", le(tag, bytes: 2) + le(channels, bytes: 2) + le(rate, bytes: 4) + le(rate * align, bytes: 4)
            + le(align, bytes: 2) + le(bits, bytes: 2))
    }

    static func file(_ chunks: [UInt8]...) -> [UInt8] {
        let body = Array("WAVE".utf8) + chunks.flatMap { $0 }
        return Array("RIFF".utf8) + le(body.count, bytes: 4) + body
    }

    static func pcm16(_ samples: [Int]) -> [UInt8] { samples.flatMap { le($0, bytes: 2) } }

    func refusal(_ bytes: [UInt8]) -> DecodingError? {
        do { _ = try WAVFile.decodeMono16(bytes); return nil } catch { return error }
    }

    // MARK: Read

    @Test func sixteenBitMonoComesBackAsItIs() throws {
        let samples = [0, 1000, -1000, 32767, -32768]
        let decoded = try WAVFile.decodeMono16(Self.file(Self.fmt(rate: 16000), Self.chunk("data", Self.pcm16(samples))))
        #expect(decoded.sampleRate == 16000)
        #expect(decoded.samples == samples.map { Int16($0) })
        // The encoder's own output reads back too.
        let wav = WAVFile(sampleRate: 22050, samples: [5, -6, 7])
        #expect(try WAVFile.decodeMono16(wav.encoded()) == (22050, [5, -6, 7]))
    }

    @Test func stereoIsMixedToMono() throws {
        let decoded = try WAVFile.decodeMono16(Self.file(Self.fmt(channels: 2), Self.chunk("data", Self.pcm16([1000, 3000, -2000, 0, 32767, 32767]))))
        #expect(decoded.samples == [2000, -1000, 32767])
    }

    @Test func eightBitIsUnsignedAroundTheMiddle() throws {
        let decoded = try WAVFile.decodeMono16(Self.file(Self.fmt(bits: 8), Self.chunk("data", [128, 255, 0, 192, 64])))
        #expect(decoded.samples == [0, 32512, -32768, 16384, -16384])
    }

    @Test func twentyFourAndThirtyTwoBitKeepTheirTopSixteenBits() throws {
        let threeBytes = Self.file(Self.fmt(bits: 24), Self.chunk("data", [0x56, 0x34, 0x12, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x80]))
        #expect(try WAVFile.decodeMono16(threeBytes).samples == [0x1234, -1, -32768])
        let fourBytes = Self.file(Self.fmt(bits: 32), Self.chunk("data", Self.le(0x1234_5678, bytes: 4) + Self.le(-65536, bytes: 4)))
        #expect(try WAVFile.decodeMono16(fourBytes).samples == [0x1234, -1])
    }

    @Test func floatIsScaledAndClamped() throws {
        let values: [Float] = [0.5, -2, .nan, 1]
        let data = values.flatMap { Self.le(Int($0.bitPattern), bytes: 4) }
        #expect(try WAVFile.decodeMono16(Self.file(Self.fmt(tag: 3, bits: 32), Self.chunk("data", data))).samples
            == [16384, -32767, 0, 32767])
        let double = Self.le(Int(bitPattern: UInt((-0.25 as Double).bitPattern)), bytes: 8)
        #expect(try WAVFile.decodeMono16(Self.file(Self.fmt(tag: 3, bits: 64), Self.chunk("data", double))).samples == [-8192])
    }

    @Test func extensibleFormatIsReadThroughItsSubFormat() throws {
        var format = Self.fmt(tag: 0xFFFE, channels: 1, bits: 16)
        // cbSize 22, valid bits, channel mask, then the sub-format GUID (KSDATAFORMAT_SUBTYPE_PCM begins 01 00).
        let extensionBytes = Self.le(22, bytes: 2) + Self.le(16, bytes: 2) + Self.le(4, bytes: 4) + [1, 0] + Array(repeating: 0, count: 14)
        format = Array(format[0..<4]) + Self.le(40, bytes: 4) + Array(format[8...]) + extensionBytes
        #expect(try WAVFile.decodeMono16(Self.file(format, Self.chunk("data", Self.pcm16([7, -7])))).samples == [7, -7])
    }

    @Test func unknownChunksAreSkippedWhereverTheyAre() throws {
        let bytes = Self.file(Self.chunk("JUNK", [1, 2, 3]), Self.fmt(), Self.chunk("LIST", [9]), Self.chunk("data", Self.pcm16([42])),
                              Self.chunk("id3 ", [1, 2, 3, 4]))
        #expect(try WAVFile.decodeMono16(bytes).samples == [42])
    }

    // MARK: Refused

    @Test func aTruncatedFileIsRefusedSayingWhatIsMissing() {
        let whole = Self.file(Self.fmt(), Self.chunk("data", Self.pcm16(Array(0..<100))))
        let error = refusal(Array(whole.dropLast(50)))
        #expect(error == .truncated("the 'data' chunk declares 200 bytes; only 150 follow"))
        #expect(error?.description.hasPrefix("truncated:") == true)
        // Cut inside the fmt chunk, or before it.
        #expect(refusal(Array(whole[0..<30])) == .truncated("the 'fmt ' chunk declares 16 bytes; only 10 follow"))
        #expect(refusal(Array(whole[0..<12])) == .missingChunk("fmt "))
        // A data chunk that stops partway through a stereo frame.
        let partial = Self.file(Self.fmt(channels: 2), Self.chunk("data", [1, 2, 3, 4, 5, 6]))
        #expect(refusal(partial) == .truncated("the data chunk's 6 bytes end partway through a 4-byte frame"))
    }

    @Test func aHugeDeclaredSizeIsNeverBelieved() {
        let lying = Self.file(Self.fmt(), Self.chunk("data", Self.pcm16([1, 2]), declaring: 0xFFFF_FFF0))
        #expect(refusal(lying) == .truncated("the 'data' chunk declares 4294967280 bytes; only 4 follow"))
        let lyingJunk = Self.file(Self.chunk("JUNK", [0, 0], declaring: 0xFFFF_FFFF), Self.fmt())
        #expect(refusal(lyingJunk) == .truncated("the 'JUNK' chunk declares 4294967295 bytes; only 26 follow"))
    }

    @Test func moreThanTenSecondsIsRefused() {
        let eleven = Self.file(Self.fmt(rate: 1000, bits: 8), Self.chunk("data", Array(repeating: 128, count: 11_000)))
        let error = refusal(eleven)
        #expect(error == .tooLong(seconds: 11))
        #expect(error?.description == "11.0 s of audio, more than the 10 s allowed")
        let ten = Self.file(Self.fmt(rate: 1000, bits: 8), Self.chunk("data", Array(repeating: 128, count: 10_000)))
        #expect(refusal(ten) == nil)
    }

    @Test func formatsItDoesNotReadAreNamed() {
        let data = Self.chunk("data", [0, 0, 0, 0])
        #expect(refusal(Array("RIFF\0\0\0\0AVI LIST".utf8)) == .notRIFFWAVE)
        #expect(refusal(Self.file(Self.fmt(tag: 0x55), data))
            == .unsupportedFormat("format tag 85 (compressed audio; only PCM and IEEE float are read)"))
        #expect(refusal(Self.file(Self.fmt(channels: 4), data)) == .unsupportedFormat("4 channels (mono or stereo only)"))
        #expect(refusal(Self.file(Self.fmt(bits: 12, blockAlign: 2), data))
            == .unsupportedFormat("12-bit integer PCM (8, 16, 24 or 32 only)"))
        #expect(refusal(Self.file(Self.fmt(rate: 0), data)) == .unsupportedFormat("a sample rate of 0 Hz (1000...384000 only)"))
        #expect(refusal(Self.file(Self.fmt(blockAlign: 3), data)) == .malformed("a block align of 3 for 1 channel(s) of 16 bits"))
        #expect(refusal(Self.file(Self.fmt(channels: 0), data)) == .malformed("0 channels"))
        #expect(refusal(Self.file(Self.fmt(), Self.chunk("data", []))) == .malformed("the data chunk holds no audio"))
        #expect(refusal(Self.file(Self.fmt())) == .missingChunk("data"))
        #expect(refusal(Self.file(data)) == .missingChunk("fmt "))
    }

    @Test func damagedFilesNeverCrashTheDecoder() {
        let good = Self.file(Self.chunk("LIST", [1, 2, 3]), Self.fmt(channels: 2), Self.chunk("data", Self.pcm16(Array(0..<64))))
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        for _ in 0..<5000 {
            var bytes = good
            for _ in 0...(next() % 4) { bytes[next() % bytes.count] = UInt8(truncatingIfNeeded: next()) }
            if next() % 3 == 0 { bytes.removeLast(next() % bytes.count) }
            _ = try? WAVFile.decodeMono16(bytes)
        }
    }

    // MARK: Resampling

    @Test func resamplingScalesTheLengthAndInterpolates() {
        #expect(WAVFile.resample([0, 100], from: 8000, to: 16000) == [0, 50, 100, 100])
        #expect(WAVFile.resample([0, 100, 200, 300], from: 16000, to: 8000) == [0, 200])
        #expect(WAVFile.resample([1, 2, 3], from: 22050, to: 22050) == [1, 2, 3])
        #expect(WAVFile.resample([], from: 8000, to: 22050) == [])
        #expect(WAVFile.resample(Array(repeating: 5, count: 44100), from: 44100, to: 22050).count == 22050)
        #expect(WAVFile.resample(Array(repeating: 5, count: 22050), from: 22050, to: 48000).count == 48000)
    }

    @Test func resamplingKeepsAToneItsPitchAndLevel() {
        let tone = (0..<48000).map { Int16(10000 * sin(2 * Double.pi * 1000 * Double($0) / 48000)) }
        let resampled = WAVFile.resample(tone, from: 48000, to: 22050)
        let analysis = SignalAnalysis(resampled, sampleRate: 22050)
        #expect(abs(analysis.toneAmplitude(frequency: 1000, from: 2205, count: 2205) - 10000) < 300)
        #expect(analysis.toneAmplitude(frequency: 1200, from: 2205, count: 2205) < 300)
    }
}
