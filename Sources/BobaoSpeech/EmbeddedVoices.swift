import BobaoPlatform
import Glibc
import Synchronization

/// Bobao's own Mandarin voice, built into the program: a `bobao` copied on its own (without a voices folder
/// next to it or installed) still speaks Mandarin, not eSpeak NG's `zh`, which reads Chinese as English pinyin.
/// Kept identical to `voices/zh` (a test compares them).
enum EmbeddedVoices {
    static let files: [String: String] = ["zh": zh]

    /// Where a built-in voice was written for eSpeak NG, which loads a voice file by path: a `PrivateFolder`
    /// in `$TMPDIR`, else `/tmp`, made on first use. The error says why no folder could be made.
    static func path(of name: String) -> Result<String, Failure> {
        guard files[name] != nil else { return .failure(Failure(description: "no built-in voice '\(name)'")) }
        return folder.withLock { folder in
            if folder == nil { folder = materialize() }
            return folder!.map { $0 + "/" + name }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private static let folder = Mutex<Result<String, Failure>?>(nil)

    private static func materialize() -> Result<String, Failure> {
        let configured = FileSystem.environment("TMPDIR").flatMap { $0.isEmpty ? nil : $0 }
        var problems: [String] = []
        let bases = (configured.map { $0 == "/tmp" ? [] : [$0] } ?? []) + ["/tmp"]
        for base in bases {
            switch PrivateFolder.make(in: base) {
            case .failure(let error):
                problems.append("\(error)")
            case .success(let directory):
                do {
                    for (name, text) in files {
                        try FileSystem.write(Array(text.utf8), to: directory + "/" + name, mode: 0o600)
                    }
                    return .success(directory)
                } catch {
                    problems.append("\(directory): \(error)")
                }
            }
        }
        return .failure(Failure(description: "the built-in voice could not be written to a temporary folder ("
            + problems.joined(separator: "; ") + "); set TMPDIR to a writable folder"))
    }

    static let zh = """
        // Bobao's Mandarin voice, loaded by path with espeak_SetVoiceByFile.
        //
        // Why it exists: eSpeak NG 1.51's own `zh`/`cmn` voice (espeak-ng-data/lang/sit/cmn) carries
        // `dictrules 1`, "interpret latin characters as English text". The cmn dictionary turns each Han
        // character into pinyin, and that rule then reads the pinyin as English words: 新客户来了 comes out
        // as "(en)zI55nw'055n ..." instead of xin1 ke4 hu4 lai2 le. This voice uses the same dictionary and
        // phonemes without that rule, so Han characters are read as Mandarin (latin text is read as pinyin).
        name Bobao Mandarin
        language cmn
        language zh

        phonemes cmn
        dictionary cmn
        words 1
        pitch 80 118

        dict_min 100000

        """
}
