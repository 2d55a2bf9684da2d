import BobaoCore
import BobaoSpeech
import Foundation
import Synchronization
import Testing

/// Collects what a synthesis delivers.
final class Collected: Sendable {
    let samples = Mutex<[Int16]>([])
    let ends = Mutex<[Bool]>([])
    /// Audio that arrived after the end event (must stay empty).
    let lateAudio = Mutex(0)

    func handle(_ event: SynthesisEvent) {
        switch event {
        case .audio(let chunk):
            if !ends.withLock({ $0.isEmpty }) { lateAudio.withLock { $0 += chunk.count } }
            samples.withLock { $0.append(contentsOf: chunk) }
        case .end(let cancelled):
            ends.withLock { $0.append(cancelled) }
        }
    }

    var count: Int { samples.withLock { $0.count } }
}

@Suite(.serialized)
struct SynthesizerTests {
    let synthesizer: EspeakSynthesizer
    init() throws { synthesizer = try EspeakSynthesizer.shared() }

    @Test func sampleRateIsEspeaks() {
        #expect(synthesizer.sampleRate == 22050)
    }

    @Test func messageEndsExactlyOnceAfterItsAudio() throws {
        let collected = Collected()
        let outcome = try synthesizer.synthesize("欢迎光临", parameters: SpeechParameters()) { collected.handle($0) }
        #expect(outcome == .completed)
        #expect(collected.ends.withLock { $0 } == [false])
        #expect(collected.lateAudio.withLock { $0 } == 0)
        #expect(collected.count > synthesizer.sampleRate / 2)
    }

    @Test func fasterRateGivesShorterAudio() throws {
        let slow = Collected(), fast = Collected()
        try synthesizer.synthesize("请到三号窗口办理", parameters: SpeechParameters(rate: 120)) { slow.handle($0) }
        try synthesizer.synthesize("请到三号窗口办理", parameters: SpeechParameters(rate: 300)) { fast.handle($0) }
        #expect(Double(fast.count) < 0.7 * Double(slow.count))
    }

    @Test func volumeScalesTheSamples() throws {
        let quiet = Collected(), loud = Collected()
        try synthesizer.synthesize("欢迎光临", parameters: SpeechParameters(volume: 30)) { quiet.handle($0) }
        try synthesizer.synthesize("欢迎光临", parameters: SpeechParameters(volume: 150)) { loud.handle($0) }
        let peak = { (c: Collected) in c.samples.withLock { $0.reduce(0) { max($0, abs(Int($1))) } } }
        #expect(peak(quiet) * 2 < peak(loud))
    }

    @Test func markupIsReadAsTextNotInterpreted() throws {
        // With SSML on, <break time="3s"/> would add three seconds of silence; as text it adds only words.
        let plain = Collected(), markup = Collected()
        try synthesizer.synthesize("你好 你好", parameters: SpeechParameters()) { plain.handle($0) }
        try synthesizer.synthesize("你好 <break time=\"3s\"/> 你好", parameters: SpeechParameters()) { markup.handle($0) }
        let extra = Double(markup.count - plain.count) / Double(synthesizer.sampleRate)
        #expect(extra < 2.5, "markup added \(extra) s")
    }

    @Test func cancellationStopsTheMessageEarly() throws {
        let full = Collected()
        let text = String(repeating: "请保管好您的随身物品，", count: 8)
        try synthesizer.synthesize(text, parameters: SpeechParameters()) { full.handle($0) }

        let partial = Collected()
        let synthesizer = self.synthesizer
        let outcome = try synthesizer.synthesize(text, parameters: SpeechParameters()) { event in
            partial.handle(event)
            if case .audio = event { synthesizer.cancel() }
        }
        #expect(outcome == .cancelled)
        #expect(partial.ends.withLock { $0 } == [true])
        #expect(partial.count < full.count / 4)

        // The engine is usable again afterwards.
        let after = Collected()
        #expect(try synthesizer.synthesize("好", parameters: SpeechParameters()) { after.handle($0) } == .completed)
        #expect(after.ends.withLock { $0 } == [false])
    }

    @Test func errorsNameWhatWasWrong() {
        #expect(throws: SpeechError.unknownVoice("no-such-voice")) {
            try synthesizer.synthesize("好", parameters: SpeechParameters(voice: "no-such-voice")) { _ in }
        }
        #expect(throws: SpeechError.unknownVoice("../etc/passwd")) {
            try synthesizer.synthesize("好", parameters: SpeechParameters(voice: "../etc/passwd")) { _ in }
        }
        #expect(throws: SpeechError.emptyText) {
            try synthesizer.synthesize("  \n", parameters: SpeechParameters()) { _ in }
        }
        #expect(throws: SpeechError.self) {
            try synthesizer.synthesize("好", parameters: SpeechParameters(rate: 5)) { _ in }
        }
    }

    @Test func builtInVoicesStillWork() throws {
        let english = Collected()
        try synthesizer.synthesize("hello", parameters: SpeechParameters(voice: "en")) { english.handle($0) }
        #expect(english.count > 0)
        #expect(try synthesizer.phonemes(of: "hello", voice: "en").contains("h@l"))
        #expect(try synthesizer.phonemes(of: "你好", voice: "yue").contains("5"))
    }
}
