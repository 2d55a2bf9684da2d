import BobaoCore
import BobaoPlatform
import BobaoSpeech
import Synchronization

/// `bobao render TEXT -o FILE.wav`: synthesizes to a WAV file instead of the sound server.
enum RenderCommand {
    static let usage = "bobao render TEXT|- -o FILE.wav [--voice NAME] [--rate WPM] [--pitch 0-99] [--volume 0-200]"

    static func run(_ arguments: [String]) throws {
        let args = try Arguments(arguments, valued: Arguments.speechOptions.union(["o", "output"]))
        guard args.positional.count == 1 else {
            throw CommandError.usage("render takes one TEXT (or - for stdin); usage: \(usage)")
        }
        guard let output = args.string("o") ?? args.string("output") else {
            throw CommandError.usage("render needs -o FILE.wav; usage: \(usage)")
        }
        let parameters = try args.speechParameters()
        var text = args.positional[0]
        if text == "-" {
            text = String(decoding: StandardStreams.readInput(), as: UTF8.self)
        }
        guard !text.allSatisfy(\.isWhitespace) else { throw CommandError(description: "empty text: nothing to render") }
        // Fail on an unwritable path before spending time on synthesis.
        do { try FileSystem.write([], to: output) } catch {
            throw CommandError(description: "cannot write \(error)")
        }
        let synthesizer = try EspeakSynthesizer.shared()
        let collected = Mutex<[Int16]>([])
        do {
            // The same words the server would say: numbers, money, dates and times spelled out.
            try synthesizer.synthesize(TextNormalizer.standard.normalize(text), parameters: parameters) { event in
                if case .audio(let samples) = event { collected.withLock { $0.append(contentsOf: samples) } }
            }
        } catch {
            FileSystem.remove(output)
            throw CommandError(description: error.description)
        }
        let wav = WAVFile(sampleRate: synthesizer.sampleRate, samples: collected.withLock { $0 })
        do { try FileSystem.write(wav.encoded(), to: output) } catch {
            throw CommandError(description: "cannot write \(error)")
        }
    }
}
