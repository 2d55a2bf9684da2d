import BobaoCore
import Foundation
import Testing

/// The ducking arithmetic and the state file's format: what is lowered, which volumes are Bobao's doing,
/// and that a damaged file is never trusted.
struct DuckingLedgerTests {
    let stream = DuckedStream(
        index: 7, server: "pulseaudio 16.1 on box, cookie 24a52dae", owner: "4242 mpv 音乐\t%",
        original: [65536, 60000], ducked: [19661, 18000])

    @Test func aFactorLowersEachChannelOnPulseAudiosScale() {
        #expect(DuckingLedger.ducked([65536], factor: 0.3) == [19661])
        #expect(DuckingLedger.ducked([65536, 32768], factor: 0.5) == [32768, 16384])
        #expect(DuckingLedger.ducked([65536], factor: 1) == [65536])
        #expect(DuckingLedger.ducked([65536], factor: 0) == [0])
        #expect(DuckingLedger.ducked([65536], factor: 7) == [65536], "clamped")
        #expect(DuckingLedger.ducked([65536], factor: .nan) == [65536], "NaN lowers nothing")
    }

    @Test func aRampEndsAtItsTargetAndMovesOneWay() {
        let down = DuckingLedger.ramp(from: [65536], to: [19661], steps: 4)
        #expect(down.count == 4)
        #expect(down.last == [19661])
        #expect(zip(down, down.dropFirst()).allSatisfy { $0[0] > $1[0] })
        #expect(DuckingLedger.ramp(from: [19661], to: [65536], steps: 4).last == [65536])
        #expect(DuckingLedger.ramp(from: [65536], to: [19661], steps: 1) == [[19661]])
        #expect(DuckingLedger.ramp(from: [65536, 1], to: [19661], steps: 4) == [[19661]], "channel counts differ")
        #expect(DuckingLedger.ramp(from: [65536], to: [0], steps: 4) == [[49152], [32768], [16384], [0]], "to silence")
    }

    @Test func aRampsStepsAreEqualInDecibels() {
        // 30 % is -31.4 dB (PulseAudio's volume is cubic): four steps of -7.8 dB.
        let decibels = DuckingLedger.ramp(from: [65536], to: [19661], steps: 4).map { 60 * log10(Double($0[0]) / 65536) }
        let sizes = zip([0] + decibels, decibels).map { $1 - $0 }
        #expect(sizes.allSatisfy { abs($0 - sizes[0]) < 0.01 && abs($0 + 7.84) < 0.01 }, "\(sizes)")
    }

    @Test func volumesCompareWithinHalfAPercent() {
        #expect(DuckingLedger.same([19661], [19661 + 300]))
        #expect(!DuckingLedger.same([19661], [19661 + 400]))
        #expect(!DuckingLedger.same([65536, 19661], [65536, 65536]))
        #expect(DuckingLedger.same([19661, 19661], [19661]), "another layout: averages")
        #expect(!DuckingLedger.same([], [19661]))
    }

    @Test func aLeftoverIsBobaosOnlyAtTheVolumeItSetOrOnItsRamp() {
        let set = DuckingLedger.volumesSet(for: stream, rampSteps: 4)
        #expect(DuckingLedger.isOneOf([19661, 18000], set))
        #expect(DuckingLedger.isOneOf(DuckingLedger.ramp(from: stream.original, to: stream.ducked, steps: 4)[1], set))
        #expect(!DuckingLedger.isOneOf([32768, 32768], set), "someone set 50 %")
        #expect(!DuckingLedger.isOneOf([65536, 60000], set), "already back: nothing to restore")
    }

    @Test func theFileRoundTripsAnyText() throws {
        let other = DuckedStream(index: UInt32.max, server: "", owner: "  ", original: [0], ducked: [0])
        let text = DuckingLedger.encode([stream, other])
        #expect(text.hasPrefix("bobao-ducking 1\n"))
        #expect(text.split(separator: "\n").count == 3, "one line a stream, whatever the strings hold")
        let decoded = try #require(DuckingLedger.decode(text))
        #expect(decoded.streams == [stream, other])
        #expect(decoded.damaged == 0)
    }

    @Test func aFileWithoutTheHeaderIsNotTrusted() {
        #expect(DuckingLedger.decode("") == nil)
        #expect(DuckingLedger.decode("bobao-ducking 2\n") == nil)
        #expect(DuckingLedger.decode("\u{0}\u{1}garbage") == nil)
        #expect(DuckingLedger.decode("bobao-ducking 1\n")?.streams == [])
    }

    @Test func damagedLinesAreSkippedAndCounted() throws {
        let good = String(DuckingLedger.encode([stream]).split(separator: "\n")[1])
        let lines = [
            "x\ta\tb\t1\t1",  // index
            "1\ta\tb\t1",  // fields
            "1\ta\tb\t1,2\t1",  // channel counts differ
            "1\ta\tb\t" + Array(repeating: "1", count: 33).joined(separator: ",") + "\t1",  // too many channels
            "1\ta\tb\t4294967295\t1",  // over PA_VOLUME_MAX
            "1\ta%\tb\t1\t1",  // a cut escape
            "1\ta%ZZ\tb\t1\t1",  // not hex
            "1\ta%FF\tb\t1\t1",  // not UTF-8
            "1\ta b\tb\t1\t1",  // a raw space
            "1\ta\tb\t-1\t1",
            "1\ta\tb\t\t",
        ]
        let decoded = try #require(DuckingLedger.decode("bobao-ducking 1\n" + (lines + [good]).joined(separator: "\n")))
        #expect(decoded.streams == [stream])
        #expect(decoded.damaged == lines.count)
    }

    @Test func aHugeFileIsReadOnlyToItsLimit() throws {
        let many = (0..<(DuckingLedger.maximumStreams + 10)).map {
            DuckedStream(index: UInt32($0), server: "s", owner: "o", original: [65536], ducked: [19661])
        }
        #expect(DuckingLedger.encode(many).split(separator: "\n").count == DuckingLedger.maximumStreams + 1)
        let text = "bobao-ducking 1\n" + many.map { "\($0.index)\ts\to\t65536\t19661" }.joined(separator: "\n")
        let decoded = try #require(DuckingLedger.decode(text))
        #expect(decoded.streams.count == DuckingLedger.maximumStreams)
        #expect(decoded.damaged == 10)
    }
}
