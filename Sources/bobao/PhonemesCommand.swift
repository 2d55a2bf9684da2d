import BobaoCore
import BobaoSpeech

/// `bobao phonemes TEXT…`: what Bobao will say, as eSpeak's phoneme mnemonics (for checking voices and the
/// normalizer); `--raw` skips the normalizer, showing eSpeak's own reading of the text as it is.
enum PhonemesCommand {
    static let usage = """
        usage: bobao phonemes [--voice NAME] [--raw] TEXT…   (TEXT -, or none: standard input)
          --voice NAME          the voice (default zh, Bobao's Mandarin voice; see bobao voices)
          --raw                 the text as it is, without Bobao's normalizer (numbers, money, dates …),
                                as eSpeak alone would read it
        Prints the text as it will be said (unless --raw), then its phonemes.
        Exit status: 0 when printed, 1 for an unknown voice or a synthesizer failure, 2 for bad usage.
        """

    static func run(_ arguments: [String]) throws {
        let args = try Arguments(arguments, valued: ["voice"], switches: ["raw"])
        let text = try TextArguments.text(args.positional, what: "phonemes", verb: "read")
        let voice = args.string("voice") ?? SpeechParameters().voice
        let synthesizer = try EspeakSynthesizer.shared()
        let spoken = args.flag("raw") ? text : TextNormalizer.standard.normalize(text)
        let phonemes = try synthesizer.phonemes(of: spoken, voice: voice)
        if !args.flag("raw") { print(spoken) }
        print(phonemes)
    }
}
