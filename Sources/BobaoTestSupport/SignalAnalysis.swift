#if canImport(Glibc)
import Glibc
#endif

/// Loudness and timing measurements of 16-bit mono PCM, for checking what reached the sound server.
public struct SignalAnalysis: Sendable {
    public let samples: [Int16]
    public let sampleRate: Int

    public init(_ samples: [Int16], sampleRate: Int) {
        self.samples = samples
        self.sampleRate = sampleRate
    }

    /// A stretch of sound, in seconds from the start of the recording.
    public struct Segment: Sendable, Equatable, CustomStringConvertible {
        public var start: Double
        public var end: Double
        public var duration: Double { end - start }
        public var description: String { "[\(start)s–\(end)s]" }
    }

    public var duration: Double { Double(samples.count) / Double(sampleRate) }

    public var peak: Int {
        samples.reduce(0) { max($0, abs(Int($1))) }
    }

    /// Root-mean-square amplitude of the whole signal (0 for digital silence).
    public var rms: Double {
        guard !samples.isEmpty else { return 0 }
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return (sum / Double(samples.count)).squareRoot()
    }

    /// The index of the first sample whose magnitude reaches `threshold`.
    public func firstLoudSample(threshold: Int = 500) -> Int? {
        samples.firstIndex { abs(Int($0)) >= threshold }
    }

    /// Stretches of sound: 10 ms windows whose RMS reaches `threshold`, joined across quiet gaps shorter than
    /// `bridging` seconds (the short pauses inside an utterance).
    public func segments(threshold: Double = 300, bridging: Double = 0.25) -> [Segment] {
        let window = max(1, sampleRate / 100)
        var segments: [Segment] = []
        var index = 0
        while index < samples.count {
            let end = min(index + window, samples.count)
            var sum = 0.0
            for i in index..<end { sum += Double(samples[i]) * Double(samples[i]) }
            let loud = (sum / Double(end - index)).squareRoot() >= threshold
            if loud {
                let start = Double(index) / Double(sampleRate), stop = Double(end) / Double(sampleRate)
                if let last = segments.last, start - last.end < bridging {
                    segments[segments.count - 1].end = stop
                } else {
                    segments.append(Segment(start: start, end: stop))
                }
            }
            index = end
        }
        return segments
    }

    /// From the first to the last loud window: how long the sound lasts, quiet pauses inside included.
    public func soundingDuration(threshold: Double = 300) -> Double {
        let all = segments(threshold: threshold, bridging: .infinity)
        guard let first = all.first, let last = all.last else { return 0 }
        return last.end - first.start
    }

    // MARK: Tones

    /// The amplitude of `frequency` in `count` samples from `start` (clamped to the recording): a Goertzel
    /// filter over a Hann window, scaled so that a pure sine of amplitude A at that frequency gives about A.
    /// Frequencies more than a few bins away (bin = sampleRate / count) give little.
    public func toneAmplitude(frequency: Double, from start: Int, count: Int) -> Double {
        let lower = max(0, start), upper = min(samples.count, start + count)
        guard upper - lower > 1 else { return 0 }
        let length = upper - lower
        let coefficient = 2 * cos(2 * Double.pi * frequency / Double(sampleRate))
        var previous = 0.0, beforePrevious = 0.0, windowSum = 0.0
        for i in 0..<length {
            let weight = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(length - 1))
            windowSum += weight
            let value = Double(samples[lower + i]) * weight + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = value
        }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        return 2 * max(0, power).squareRoot() / windowSum
    }

    /// Stretches where `frequency` sounds: `window`-second windows whose `toneAmplitude` reaches `threshold`,
    /// joined across gaps shorter than `bridging` seconds. Tells a tone from other sound at the same time.
    public func toneSegments(
        frequency: Double, threshold: Double, window: Double = 0.01, bridging: Double = 0.015
    ) -> [Segment] {
        let size = max(2, Int(window * Double(sampleRate)))
        var segments: [Segment] = []
        var index = 0
        while index + size <= samples.count {
            if toneAmplitude(frequency: frequency, from: index, count: size) >= threshold {
                let start = Double(index) / Double(sampleRate), stop = Double(index + size) / Double(sampleRate)
                if let last = segments.last, start - last.end < bridging {
                    segments[segments.count - 1].end = stop
                } else {
                    segments.append(Segment(start: start, end: stop))
                }
            }
            index += size
        }
        return segments
    }
}
