import BobaoPlatform
import Glibc
import Synchronization

/// Bobao's own Mandarin voice, built into the program: a `bobao` copied on its own (without a voices folder
/// next to it or installed) still speaks Mandarin, not eSpeak NG's `zh`, which reads Chinese as English pinyin.
/// Kept identical to `voices/zh` (a test compares them).
enum EmbeddedVoices {
    static let files: [String: String] = ["zh": zh]

    /// The built-in voices written to a private folder (mkdtemp, mode 0700) that is removed at exit: eSpeak
    /// NG loads a voice file by path. Nil when no temporary folder can be made.
    static func materialize() -> String? {
        let base = FileSystem.environment("TMPDIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/bobao-voices-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else { return nil }
        let directory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        for (name, text) in files {
            do { try FileSystem.write(Array(text.utf8), to: directory + "/" + name, mode: 0o600) } catch { return nil }
        }
        created.withLock { $0 = directory }
        atexit {
            guard let directory = EmbeddedVoices.created.withLock({ $0 }) else { return }
            for name in EmbeddedVoices.files.keys { FileSystem.remove(directory + "/" + name) }
            rmdir(directory)
        }
        return directory
    }

    private static let created = Mutex<String?>(nil)

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
