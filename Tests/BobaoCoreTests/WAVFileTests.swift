import BobaoCore
import Testing

struct WAVFileTests {
    @Test func headerDescribesSixteenBitMonoPCM() {
        let bytes = WAVFile(sampleRate: 22050, samples: [0, 1, -1, 32767]).encoded()
        #expect(bytes.count == 44 + 8)
        #expect(Array(bytes[0..<4]) == Array("RIFF".utf8))
        #expect(Array(bytes[8..<16]) == Array("WAVEfmt ".utf8))
        #expect(bytes[20] == 1 && bytes[21] == 0)  // PCM
        #expect(bytes[22] == 1)  // mono
        #expect(Int(bytes[24]) | Int(bytes[25]) << 8 | Int(bytes[26]) << 16 == 22050)
        #expect(bytes[34] == 16)  // bits per sample
        #expect(Int(bytes[40]) | Int(bytes[41]) << 8 == 8)  // data bytes
        #expect(Array(bytes[44...]) == [0, 0, 1, 0, 0xFF, 0xFF, 0xFF, 0x7F])
    }

    @Test func roundTripsThroughDecoding() throws {
        let wav = WAVFile(sampleRate: 16000, samples: (0..<1000).map { Int16(truncatingIfNeeded: $0 * 37) })
        #expect(try WAVFile(decoding: wav.encoded()) == wav)
        #expect(wav.duration == 1000.0 / 16000.0)
    }

    @Test func decodingSkipsUnknownChunks() throws {
        var bytes = WAVFile(sampleRate: 8000, samples: [5, 6]).encoded()
        let list: [UInt8] = Array("LIST".utf8) + [3, 0, 0, 0, 1, 2, 3, 0]  // odd size, padded
        bytes.insert(contentsOf: list, at: 36)
        #expect(try WAVFile(decoding: bytes).samples == [5, 6])
    }

    @Test func decodingRejectsWhatIsNotWAVE() {
        #expect(throws: WAVFile.DecodingError.notRIFFWAVE) { try WAVFile(decoding: Array("hello world!".utf8)) }
    }
}

struct SpeechParametersTests {
    @Test(arguments: [
        (SpeechParameters(rate: 79), "rate 79 is outside 80...450 words per minute"),
        (SpeechParameters(pitch: 100), "pitch 100 is outside 0...99"),
        (SpeechParameters(volume: -1), "volume -1 is outside 0...200"),
    ])
    func outOfRangeValuesAreNamed(parameters: SpeechParameters, message: String) {
        #expect(throws: SpeechParameters.Invalid.self) { try parameters.validate() }
        do { try parameters.validate() } catch { #expect(error.description == message) }
    }

    @Test func defaultsAreValid() throws {
        try SpeechParameters().validate()
        #expect(SpeechParameters().voice == "zh")
    }
}
