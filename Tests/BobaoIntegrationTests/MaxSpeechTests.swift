import BobaoCore
import BobaoServer
import BobaoSpeech
import BobaoTestSupport
import Foundation
import Synchronization
import Testing

extension SoundSuites {
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct MaxSpeechTests {
        @Test func anAnnouncementLongerThanMaxSpeechIsCutThereAndTheNextIsSpoken() throws {
            let sound = try TestSoundServer.shared()
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let bobao = try ServerProcess(arguments: ["--max-speech", "2"], pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            // Two thousand digits are read one by one: minutes of speech.
            let digits = String((0..<2000).map { Character(String($0 * 7 % 10)) })
            #expect(try bobao.exchange(digits + "\n欢迎光临\n") == ["OK 1", "OK 2"])
            #expect(bobao.waitForLog("cut #1 after 2 s (--max-speech 2)", timeout: 20))
            #expect(bobao.waitForLog("spoke #2", timeout: 20))
            recorder.record(seconds: 0.5)
            // The last stretch of sound is the welcome; everything before it is the cut announcement.
            let segments = recorder.analysis.segments()
            let welcome = try Self.soundingDuration(of: "欢迎光临")
            try #require(segments.count >= 2, "\(segments)")
            let cut = segments[segments.count - 2].end - segments[0].start
            #expect(cut > 1.6 && cut < 2.3, "the cut announcement sounded for \(cut) s, not about 2 s: \(segments)")
            #expect(abs(segments[segments.count - 1].duration - welcome) < 0.2 * welcome, "\(segments)")
            #expect(!bobao.log.contains("said again"))
            #expect(bobao.stop() == 0)
        }

        @Test(arguments: ["0", "-5", "1.5", "soon"])
        func maxSpeechTakesAWholeNumberOfSecondsFromOne(value: String) throws {
            let result = try BobaoBinary.run(["serve", "--listen", "127.0.0.1:0", "--no-spool", "--max-speech", value])
            #expect(result.status == 2)
            #expect(result.stderr.contains("--max-speech"), "\(result.stderr)")
        }

        static func soundingDuration(of text: String) throws -> Double {
            let synthesizer = try EspeakSynthesizer.shared()
            let samples = Mutex<[Int16]>([])
            try synthesizer.synthesize(text, parameters: SpeechParameters()) { event in
                if case .audio(let chunk) = event { samples.withLock { $0.append(contentsOf: chunk) } }
            }
            return SignalAnalysis(samples.withLock { $0 }, sampleRate: synthesizer.sampleRate).soundingDuration()
        }
    }
}
