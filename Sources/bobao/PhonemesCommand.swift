import BobaoSpeech

/// `bobao phonemes TEXT [--voice NAME]`: what eSpeak would say, as phoneme mnemonics (for checking voices).
enum PhonemesCommand {
    static func run(_ arguments: [String]) throws {
        let args = try Arguments(arguments, valued: ["voice"])
        guard !args.positional.isEmpty else { throw CommandError.usage("usage: bobao phonemes TEXT [--voice NAME]") }
        let synthesizer = try EspeakSynthesizer.shared()
        print(try synthesizer.phonemes(of: args.positional.joined(separator: " "), voice: args.string("voice") ?? "zh"))
    }
}
