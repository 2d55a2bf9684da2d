/// Finding a known sound in a recording: where a rendering of one announcement starts, even right after
/// another one's speech, where loudness alone cannot tell them apart.
extension SignalAnalysis {
    /// A match of a template in the recording.
    public struct Match: Sendable, CustomStringConvertible {
        /// The sample index where the template's first sample lies.
        public var index: Int
        /// The correlation there, from -1 to 1 (1: the same loudness contour).
        public var correlation: Double
        public var description: String { "sample \(index) (r = \((correlation * 1000).rounded() / 1000))" }
    }

    /// Where `template` best matches the recording, among start indexes `range` (clamped so the template
    /// fits): the peak of the correlation of their loudness contours, the RMS of consecutive `window`-second
    /// windows with their means taken off, tried at every `step` samples.
    ///
    /// Contours, not waveforms: eSpeak NG carries state from one utterance to the next, so the same text
    /// rendered in another process matches the played speech sample by sample only in stretches, drifting
    /// by a few samples and now and then by 10 ms; its contour does not. Over 0.6 s of speech, the same
    /// text scores above 0.95 and other speech of the same voice below 0.75.
    public func contourMatch(
        of template: [Int16], startingIn range: Range<Int>, window: Double = 0.005, step: Int = 11
    ) -> Match? {
        let size = max(1, Int(window * Double(sampleRate)))
        let count = template.count / size
        let lower = max(0, range.lowerBound), upper = min(range.upperBound, samples.count - count * size + 1)
        guard count >= 2, lower < upper else { return nil }
        func centred(_ values: [Double]) -> [Double] {
            let mean = values.reduce(0, +) / Double(values.count)
            return values.map { $0 - mean }
        }
        let pattern = centred((0..<count).map { k in
            let sum = template[(k * size)..<((k + 1) * size)].reduce(0.0) { $0 + Double($1) * Double($1) }
            return (sum / Double(size)).squareRoot()
        })
        let patternNorm = pattern.reduce(0) { $0 + $1 * $1 }.squareRoot()
        guard patternNorm > 0 else { return nil }
        // Sums of squares up to each index of the searched stretch, so each window's RMS is one subtraction.
        let end = upper - 1 + count * size
        var prefix = [Double](repeating: 0, count: end - lower + 1)
        for i in lower..<end {
            prefix[i - lower + 1] = prefix[i - lower] + Double(samples[i]) * Double(samples[i])
        }
        var best: Match?
        var contour = [Double](repeating: 0, count: count)
        for start in stride(from: lower, to: upper, by: max(1, step)) {
            var mean = 0.0
            for k in 0..<count {
                let from = start - lower + k * size
                contour[k] = (max(0, prefix[from + size] - prefix[from]) / Double(size)).squareRoot()
                mean += contour[k]
            }
            mean /= Double(count)
            var dot = 0.0, norm = 0.0
            for k in 0..<count {
                let value = contour[k] - mean
                dot += value * pattern[k]
                norm += value * value
            }
            guard norm > 0 else { continue }
            let correlation = dot / (norm.squareRoot() * patternNorm)
            if best == nil || correlation > best!.correlation { best = Match(index: start, correlation: correlation) }
        }
        return best
    }
}
