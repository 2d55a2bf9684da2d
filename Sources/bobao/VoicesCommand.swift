import BobaoSpeech

/// `bobao voices`: Bobao's own voice files first, then eSpeak NG's built-in voices, each marked.
enum VoicesCommand {
    static func run(_ arguments: [String]) throws {
        _ = try Arguments(arguments, valued: [])
        let synthesizer = try EspeakSynthesizer.shared()
        let catalog = synthesizer.voices
        print("# project voices (\(catalog.directory ?? "no voices folder found")); these win over built-in names")
        for name in catalog.projectVoiceNames() {
            print("project   \(name)")
        }
        print("# eSpeak NG built-in voices")
        for voice in synthesizer.builtInVoices() {
            let shadowed = catalog.projectVoiceNames().contains(voice.identifier.split(separator: "/").last.map(String.init) ?? "")
            print("built-in  \(voice.identifier)  (\(voice.language))\(shadowed ? "  [name taken by project voice]" : "")")
        }
    }
}
