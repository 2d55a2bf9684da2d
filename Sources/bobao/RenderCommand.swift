import BobaoCore
import BobaoSpeech
import Foundation
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
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        }
        guard !text.allSatisfy(\.isWhitespace) else { throw CommandError(description: "empty text: nothing to render") }
        // Fail on an unwritable path before spending time on synthesis.
        guard FileManager.default.createFile(atPath: output, contents: nil) else {
            throw CommandError(description: "cannot write \(output): \(String(cString: strerror(errno)))")
        }
        let synthesizer = try EspeakSynthesizer.shared()
        let collected = Mutex<[Int16]>([])
        do {
            try synthesizer.synthesize(text, parameters: parameters) { event in
                if case .audio(let samples) = event { collected.withLock { $0.append(contentsOf: samples) } }
            }
        } catch {
            try? FileManager.default.removeItem(atPath: output)
            throw CommandError(description: error.description)
        }
        let wav = WAVFile(sampleRate: synthesizer.sampleRate, samples: collected.withLock { $0 })
        do {
            try Data(wav.encoded()).write(to: URL(fileURLWithPath: output))
        } catch {
            throw CommandError(description: "cannot write \(output): \(error.localizedDescription)")
        }
    }
}
