import BobaoCore
import BobaoPlatform
import BobaoSpeech
import Glibc
import Synchronization

/// `bobao render TEXT… -o FILE.wav`: synthesizes to a WAV file (or standard output) instead of the sound server.
enum RenderCommand {
    static let usage = """
        usage: bobao render [OPTIONS] -o FILE.wav TEXT…   (TEXT -, or none: standard input)
          -o, --output FILE     the WAV file to write (16-bit mono); - writes it to standard output
          --voice NAME          a voice (default zh, Bobao's Mandarin voice; see bobao voices)
          --rate WPM            80 to 450 words a minute (default 175)
          --pitch N             0 to 99 (default 50)
          --volume N            0 to 200 (default 100)
        The text is normalized first, as the server does (numbers, money, dates and times in words);
        its words are joined with spaces, as bobao say joins them.
        Exit status: 0 when the file was written, 1 when it could not be, 2 for bad usage.
        """

    static func run(_ arguments: [String]) throws {
        let args = try Arguments(arguments, valued: Arguments.speechOptions.union(["o", "output"]))
        guard let output = args.string("o") ?? args.string("output"), !output.isEmpty else {
            throw CommandError.usage("render needs -o FILE.wav (or -o - for standard output)")
        }
        let parameters = try args.speechParameters()
        let text = try TextArguments.text(args.positional, what: "render")
        let toStandardOutput = output == "-"
        // Fail on an unwritable path before spending time on synthesis.
        if !toStandardOutput {
            do { try FileSystem.write([], to: output) } catch {
                throw CommandError(description: "cannot write \(error)")
            }
        }
        let synthesizer = try EspeakSynthesizer.shared()
        let collected = Mutex<[Int16]>([])
        do {
            // The same words the server would say: numbers, money, dates and times spelled out.
            try synthesizer.synthesize(TextNormalizer.standard.normalize(text), parameters: parameters) { event in
                if case .audio(let samples) = event { collected.withLock { $0.append(contentsOf: samples) } }
            }
        } catch {
            if !toStandardOutput { FileSystem.remove(output) }
            throw CommandError(description: error.description)
        }
        let wav = WAVFile(sampleRate: synthesizer.sampleRate, samples: collected.withLock { $0 }).encoded()
        if toStandardOutput {
            guard StandardStreams.writeOutput(bytes: wav) else {
                throw CommandError(description: "cannot write the WAV to standard output: \(String(cString: strerror(errno)))")
            }
            return
        }
        do { try FileSystem.write(wav, to: output) } catch {
            throw CommandError(description: "cannot write \(error)")
        }
    }
}
