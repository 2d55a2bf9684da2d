import BobaoPlatform
import Glibc
import Synchronization

/// Bobao's own Mandarin voice, built into the program: a `bobao` copied on its own (without a voices folder
/// next to it or installed) still speaks Mandarin, not eSpeak NG's `zh`, which reads Chinese as English pinyin.
/// Kept identical to `voices/zh` (a test compares them).
enum EmbeddedVoices {
    static let files: [String: String] = ["zh": zh]

    /// Where a built-in voice was written for eSpeak NG, which loads a voice file by path: a private folder
    /// (mkdtemp, mode 0700) in `$TMPDIR`, else `/tmp`, made on first use and removed at exit. Folders that
    /// earlier runs left behind (killed by a signal, where atexit does not run) are removed when their
    /// process is gone. The error says why no folder could be made.
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
        for base in [configured, "/tmp"].compactMap({ $0 }) where !problems.contains(where: { $0.hasPrefix(base + ":") }) {
            removeLeftovers(in: base)
            var template = Array((base + "/bobao-voices-\(getpid())-XXXXXX").utf8CString)
            guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
                problems.append("\(base): \(String(cString: strerror(errno)))")
                continue
            }
            let directory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
            do {
                for (name, text) in files { try FileSystem.write(Array(text.utf8), to: directory + "/" + name, mode: 0o600) }
            } catch {
                problems.append("\(directory): \(error)")
                remove(directory)
                continue
            }
            created.withLock { $0 = directory }
            atexit { EmbeddedVoices.created.withLock { $0 }.map(EmbeddedVoices.remove) }
            return .success(directory)
        }
        return .failure(Failure(description: "the built-in voice could not be written to a temporary folder ("
            + problems.joined(separator: "; ") + "); set TMPDIR to a writable folder"))
    }

    private static let created = Mutex<String?>(nil)

    private static func remove(_ directory: String) {
        for name in files.keys { FileSystem.remove(directory + "/" + name) }
        rmdir(directory)
    }

    /// `bobao-voices-PID-XXXXXX` folders of this user whose process no longer runs.
    private static func removeLeftovers(in base: String) {
        for entry in FileSystem.contentsOfDirectory(base) ?? [] where entry.hasPrefix("bobao-voices-") {
            let parts = entry.split(separator: "-")
            guard parts.count == 4, let pid = pid_t(parts[2]), kill(pid, 0) != 0, errno == ESRCH else { continue }
            var info = stat()
            let path = base + "/" + entry
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid() else { continue }
            remove(path)
        }
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
