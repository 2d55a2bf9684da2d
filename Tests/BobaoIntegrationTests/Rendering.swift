import BobaoCore
import BobaoSpeech
import BobaoTestSupport
import Synchronization

/// What eSpeak makes of a text in this process, with the server's default voice and settings: the reference
/// that recordings of `bobao serve` are held against.
struct Rendering {
    let analysis: SignalAnalysis

    init(_ text: String, parameters: SpeechParameters = SpeechParameters()) throws {
        let synthesizer = try EspeakSynthesizer.shared()
        let samples = Mutex<[Int16]>([])
        try synthesizer.synthesize(text, parameters: parameters) { event in
            if case .audio(let chunk) = event { samples.withLock { $0.append(contentsOf: chunk) } }
        }
        analysis = SignalAnalysis(samples.withLock { $0 }, sampleRate: synthesizer.sampleRate)
    }

    /// From the first to the last loud 10 ms window, measured as the recordings are.
    var soundingDuration: Double { analysis.soundingDuration() }

    /// Quiet before the first loud window and after the last one.
    var leadingQuiet: Double { analysis.segments(bridging: .infinity).first?.start ?? 0 }
    var trailingQuiet: Double { analysis.duration - (analysis.segments(bridging: .infinity).last?.end ?? 0) }

    /// `seconds` of the rendering from its first loud sample on: what to look for in a recording with
    /// `SignalAnalysis.bestMatch`, whose index is then where the speech's first loud sample was heard.
    func opening(seconds: Double) -> [Int16] {
        let start = analysis.firstLoudSample() ?? 0
        let end = min(analysis.samples.count, start + Int(seconds * Double(analysis.sampleRate)))
        return Array(analysis.samples[start..<end])
    }
}

extension MonitorRecorder {
    /// The recording from sample `start` on, analysed.
    func analysis(from start: Int) -> SignalAnalysis {
        let all = samples
        return SignalAnalysis(Array(all[min(start, all.count)...]), sampleRate: sampleRate)
    }

    /// Waits until the recording ends with `quiet` seconds without a loud window after sound that began at
    /// or after sample `start`; false on timeout.
    @discardableResult
    func waitForQuiet(after start: Int, quiet: Double = 0.5, timeout: Double = 20) -> Bool {
        waitUntil(timeout: timeout) { samples in
            guard samples.count > start else { return false }
            let analysis = SignalAnalysis(Array(samples[start...]), sampleRate: sampleRate)
            guard let last = analysis.segments(bridging: .infinity).last else { return false }
            return analysis.duration - last.end >= quiet
        }
    }
}
