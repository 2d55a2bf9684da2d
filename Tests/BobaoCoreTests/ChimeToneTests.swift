import BobaoCore
import BobaoTestSupport
import Testing

/// The built-in chime: two tones in order, as loud as speech, then a little silence.
struct ChimeToneTests {
    let rate = 22050

    @Test func soundsItsFirstToneThenItsSecond() throws {
        let analysis = SignalAnalysis(ChimeTone.twoTone(sampleRate: rate), sampleRate: rate)
        let (high, low) = ChimeTone.frequencies
        #expect(high > low)
        // 100 ms inside each tone: 10 Hz bins, so the other tone (272 Hz away) barely registers.
        let first = Int(0.02 * Double(rate)), second = Int(0.20 * Double(rate)), span = rate / 10
        let firstHigh = analysis.toneAmplitude(frequency: high, from: first, count: span)
        let firstLow = analysis.toneAmplitude(frequency: low, from: first, count: span)
        let secondHigh = analysis.toneAmplitude(frequency: high, from: second, count: span)
        let secondLow = analysis.toneAmplitude(frequency: low, from: second, count: span)
        #expect(firstHigh > 3000 && firstHigh > 20 * firstLow, "\(firstHigh) vs \(firstLow)")
        #expect(secondLow > 3000 && secondLow > 20 * secondHigh, "\(secondLow) vs \(secondHigh)")
        // And the tone filter the integration tests use finds one stretch of each, in that order.
        let highSegments = analysis.toneSegments(frequency: high, threshold: 1000, window: 0.02)
        let lowSegments = analysis.toneSegments(frequency: low, threshold: 1000, window: 0.02)
        try #require(highSegments.count == 1 && lowSegments.count == 1, "\(highSegments) \(lowSegments)")
        #expect(highSegments[0].end <= lowSegments[0].start + 0.021)
    }

    @Test func lastsUnderHalfASecondThenFallsSilent() {
        let samples = ChimeTone.twoTone(sampleRate: rate)
        let (first, second, silence) = ChimeTone.durations
        #expect(first + second < 0.5)
        #expect(abs(Double(samples.count) / Double(rate) - (first + second + silence)) < 0.001)
        let tail = samples.suffix(Int(silence * Double(rate)))
        #expect(tail.allSatisfy { $0 == 0 })
        // Each tone fades to nothing at its end, so neither clicks.
        let firstEnd = Int(first * Double(rate))
        #expect(abs(Int(samples[firstEnd - 1])) < 50 && abs(Int(samples[firstEnd])) < 50)
        #expect(abs(Int(samples[0])) < 50)
    }

    @Test func peaksAtTheAmplitudeAskedFor() {
        let analysis = SignalAnalysis(ChimeTone.twoTone(sampleRate: rate), sampleRate: rate)
        let expected = ChimeTone.defaultAmplitude * 32767
        #expect(abs(Double(analysis.peak) - expected) < 0.02 * expected, "peak \(analysis.peak)")
        #expect(SignalAnalysis(ChimeTone.twoTone(sampleRate: rate, amplitude: 1), sampleRate: rate).peak > 32000)
        #expect(ChimeTone.twoTone(sampleRate: rate, amplitude: 0).allSatisfy { $0 == 0 })
        #expect(ChimeTone.twoTone(sampleRate: 48000).count > ChimeTone.twoTone(sampleRate: 8000).count)
        #expect(ChimeTone.twoTone(sampleRate: 0).isEmpty)
    }
}
