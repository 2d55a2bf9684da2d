#if canImport(Glibc)
import Glibc
#endif

/// The built-in chime, synthesized in code: a two-tone "ding-dong" (a high note, then a lower one, each
/// struck and dying away), then a short silence before the speech.
///
/// Pure sines a major third apart, well above speech's fundamentals, so a test can find each in a recording
/// with a tone filter. At the default amplitude its loud part matches the loud windows of eSpeak NG's speech
/// at volume 100 (a sine peaking at 0.35 of full scale has an RMS of ~8100; eSpeak's Mandarin reaches
/// 6000–8000 in its 90th-percentile 10 ms windows, with peaks of 0.7–0.85).
public enum ChimeTone {
    /// The name the built-in chime answers to (a `ding.wav` in the chimes folder replaces it).
    public static let builtInName = "ding"

    /// E6, then C6, in Hz.
    public static let frequencies: (first: Double, second: Double) = (1318.5, 1046.5)

    /// How long each part lasts, in seconds: the two tones, then the silence before the speech.
    public static let durations: (first: Double, second: Double, silence: Double) = (0.18, 0.26, 0.08)

    /// The default peak, as a fraction of full scale.
    public static let defaultAmplitude = 0.35

    /// The chime as 16-bit mono samples at `sampleRate`, peaking at `amplitude` of full scale (clamped to
    /// 0...1): each tone rises in 5 ms, decays exponentially (to about -22 dB by its end) and fades to zero
    /// over its last 10 ms, so nothing clicks.
    public static func twoTone(sampleRate: Int, amplitude: Double = defaultAmplitude) -> [Int16] {
        let peak = min(max(amplitude, 0), 1) * 32767
        var samples: [Int16] = []
        let total = durations.first + durations.second + durations.silence
        samples.reserveCapacity(Int(total * Double(max(sampleRate, 0))) + 2)
        appendTone(frequencies.first, seconds: durations.first, peak: peak, sampleRate: sampleRate, to: &samples)
        appendTone(frequencies.second, seconds: durations.second, peak: peak, sampleRate: sampleRate, to: &samples)
        samples.append(contentsOf: repeatElement(0, count: Int(durations.silence * Double(max(sampleRate, 0)))))
        return samples
    }

    private static func appendTone(
        _ frequency: Double, seconds: Double, peak: Double, sampleRate: Int, to samples: inout [Int16]
    ) {
        guard sampleRate > 0 else { return }
        let rate = Double(sampleRate)
        let count = Int(seconds * rate)
        let attack = 0.005 * rate, release = 0.010 * rate
        let decay = seconds / 2.5  // time constant: e^-2.5 ≈ -22 dB at the end
        for i in 0..<count {
            let t = Double(i) / rate
            // Full height at the end of the attack, then the decay.
            var envelope = Double(i) < attack ? Double(i) / attack : exp(-(Double(i) - attack) / rate / decay)
            let left = Double(count - 1 - i)
            if left < release { envelope *= left / release }
            samples.append(Int16(peak * envelope * sin(2 * Double.pi * frequency * t)))
        }
    }
}
