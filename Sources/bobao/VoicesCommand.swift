import BobaoSpeech

/// `bobao voices`: Bobao's own voice files first, then eSpeak NG's built-in voices, each marked.
enum VoicesCommand {
    static let usage = """
        usage: bobao voices
        Lists Bobao's own voices (the files of its voices folder: BOBAO_VOICES, voices/ next to the program,
        PREFIX/share/bobao/voices, the source checkout, /usr/local/share/bobao/voices or
        /usr/share/bobao/voices, whichever is found first; zh is also built into the program, for a folder
        without it), then eSpeak NG's built-in voices. Bobao's voices win over eSpeak's of the same name.
        """

    static func run(_ arguments: [String]) throws {
        let args = try Arguments(arguments, valued: [])
        guard args.positional.isEmpty else { throw CommandError.usage("voices takes no arguments") }
        let synthesizer = try EspeakSynthesizer.shared()
        let catalog = synthesizer.voices
        let folder = catalog.directory ?? catalog.problem ?? "no voices folder found"
        print("# project voices (\(folder)); these win over built-in names")
        for name in catalog.folderVoiceNames() {
            print("project   \(name)")
        }
        for name in catalog.builtIntoProgramNames() {
            print("project   \(name)  (built into bobao: the folder has no \(name))")
        }
        print("# eSpeak NG built-in voices")
        for voice in synthesizer.builtInVoices() {
            let shadowed = catalog.projectVoiceNames().contains(voice.identifier.split(separator: "/").last.map(String.init) ?? "")
            print("built-in  \(voice.identifier)  (\(voice.language))\(shadowed ? "  [name taken by project voice]" : "")")
        }
    }
}
