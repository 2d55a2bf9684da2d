import BobaoTestSupport
import Foundation
import Testing

/// The measuring tools the integration tests rely on must themselves measure right.
struct SignalAnalysisTests {
    func tone(seconds: Double, rate: Int = 22050, amplitude: Double = 8000) -> [Int16] {
        (0..<Int(seconds * Double(rate))).map { Int16(amplitude * sin(Double($0) * 2 * .pi * 440 / Double(rate))) }
    }

    func silence(seconds: Double, rate: Int = 22050) -> [Int16] { Array(repeating: 0, count: Int(seconds * Double(rate))) }

    @Test func findsSeparateUtterances() {
        let signal = silence(seconds: 0.3) + tone(seconds: 0.5) + silence(seconds: 0.6) + tone(seconds: 0.2)
            + silence(seconds: 0.1)
        let segments = SignalAnalysis(signal, sampleRate: 22050).segments()
        #expect(segments.count == 2)
        #expect(abs(segments[0].start - 0.3) < 0.011 && abs(segments[0].duration - 0.5) < 0.021)
        #expect(abs(segments[1].start - 1.4) < 0.011)
    }

    @Test func bridgesShortPausesInsideAnUtterance() {
        let signal = tone(seconds: 0.3) + silence(seconds: 0.1) + tone(seconds: 0.3)
        let analysis = SignalAnalysis(signal, sampleRate: 22050)
        #expect(analysis.segments().count == 1)
        #expect(abs(analysis.soundingDuration() - 0.7) < 0.02)
    }

    @Test func silenceHasNoSegmentsAndNoLoudSample() {
        let analysis = SignalAnalysis(silence(seconds: 1) + [100, -100], sampleRate: 22050)
        #expect(analysis.segments().isEmpty)
        #expect(analysis.firstLoudSample() == nil)
        #expect(analysis.peak == 100)
    }

    @Test func measuresAToneAndTellsItFromAnother() {
        let analysis = SignalAnalysis(silence(seconds: 0.2) + tone(seconds: 0.3) + silence(seconds: 0.2), sampleRate: 22050)
        let middle = Int(0.25 * 22050), window = 220
        #expect(abs(analysis.toneAmplitude(frequency: 440, from: middle, count: window) - 8000) < 400)
        #expect(analysis.toneAmplitude(frequency: 1000, from: middle, count: window) < 200)
        #expect(analysis.toneAmplitude(frequency: 440, from: 0, count: window) == 0)
        let segments = analysis.toneSegments(frequency: 440, threshold: 4000)
        #expect(segments.count == 1)
        #expect(abs(segments[0].start - 0.2) < 0.011 && abs(segments[0].end - 0.5) < 0.011, "\(segments)")
        #expect(analysis.toneSegments(frequency: 1000, threshold: 4000).isEmpty)
    }
}

