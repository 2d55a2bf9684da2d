import BobaoPlatform

/// Where Bobao's own voice files live and how a voice name resolves.
///
/// A name resolves first to `voices/NAME` of the project (loaded by path with `espeak_SetVoiceByFile`),
/// then to eSpeak NG's built-in voices, so `zh` is Bobao's Mandarin voice while `yue` or `en` still work.
public struct VoiceCatalog: Sendable, Equatable {
    /// The project's voices folder, if one was found.
    public let directory: String?
    /// Why no folder was found where one was named: `BOBAO_VOICES=/x is not a folder`.
    public let problem: String?

    public init(directory: String?, problem: String? = nil) {
        self.directory = directory
        self.problem = problem
    }

    /// What a voice name means.
    public enum Resolution: Sendable, Equatable {
        /// A file of the project's voices folder.
        case projectFile(path: String)
        /// A name for eSpeak NG's own voice list.
        case builtIn(name: String)
        /// A voice built into the program that could not be written where eSpeak NG can load it.
        case unavailable(name: String, reason: String)
    }

    /// A voice name is a file name, never a path: letters, digits, `-`, `_`, `+`, `.` (not leading).
    public static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first != ".", name.utf8.count <= 64 else { return false }
        return name.unicodeScalars.allSatisfy { s in
            (s.isASCII && (s.properties.isAlphabetic || ("0"..."9").contains(s))) || "-_+.".unicodeScalars.contains(s)
        }
    }

    /// `NAME` of the voices folder; else a voice built into the program (`zh`); else eSpeak NG's own.
    public func resolve(_ name: String) -> Resolution {
        if let directory, Self.isValidName(name) {
            let path = directory + "/" + name
            if FileSystem.isRegularFile(path) {
                return .projectFile(path: path)
            }
        }
        if problem == nil, EmbeddedVoices.files[name] != nil {
            switch EmbeddedVoices.path(of: name) {
            case .success(let path): return .projectFile(path: path)
            case .failure(let failure): return .unavailable(name: name, reason: failure.description)
            }
        }
        return .builtIn(name: name)
    }


    /// Names of the voice files in the project's folder, sorted.
    public func folderVoiceNames() -> [String] {
        guard let directory,
              let names = FileSystem.contentsOfDirectory(directory) else { return [] }
        return names.filter { name in
            Self.isValidName(name) && !name.hasSuffix(".md") && FileSystem.isRegularFile(directory + "/" + name)
        }.sorted()
    }

    /// Voices built into the program that the folder does not have (all of them without a folder).
    public func builtIntoProgramNames() -> [String] {
        guard problem == nil else { return [] }
        let inFolder = Set(folderVoiceNames())
        return EmbeddedVoices.files.keys.filter { !inFolder.contains($0) }.sorted()
    }

    /// Bobao's own voices: the folder's, and those built into the program.
    public func projectVoiceNames() -> [String] { (folderVoiceNames() + builtIntoProgramNames()).sorted() }

    /// Whether `path` (of a `.projectFile`) is a voice built into the program rather than the folder's.
    public func isBuiltIntoProgram(path: String) -> Bool {
        !(directory.map { path.hasPrefix($0 + "/") } ?? false)
    }

    // MARK: Finding the folder

    /// Finds the voices folder however Bobao is run, in this order:
    /// `$BOBAO_VOICES`; `voices/` next to the executable; `../share/bobao/voices` from the executable
    /// (an installed prefix); the source checkout the executable was built in (an ancestor folder holding
    /// `Package.swift` and `voices/`, as with `swift run` or `.build/debug/bobao`); then
    /// `/usr/local/share/bobao/voices` and `/usr/share/bobao/voices`. A voice none of them has (`zh` of a
    /// `bobao` copied on its own) may be built into the program: see `resolve`.
    public static func locate(
        environment: [String: String] = FileSystem.environment(),
        executablePath: String = Self.currentExecutablePath()
    ) -> VoiceCatalog {
        let found = candidateDirectories(environment: environment, executablePath: executablePath)
            .first(where: FileSystem.isDirectory)
        let explicit = environment["BOBAO_VOICES"] ?? ""
        return VoiceCatalog(
            directory: found, problem: found == nil && !explicit.isEmpty ? "BOBAO_VOICES=\(explicit) is not a folder (unset it to use the voices installed with bobao, or built into it)" : nil)
    }

    /// Every place `locate` looks, in order.
    public static func candidateDirectories(environment: [String: String], executablePath: String) -> [String] {
        if let explicit = environment["BOBAO_VOICES"], !explicit.isEmpty {
            return [explicit]  // An explicit setting is never second-guessed.
        }
        let executableDirectory = FileSystem.parent(of: FileSystem.resolvedPath(executablePath) ?? executablePath)
        let prefix = FileSystem.parent(of: executableDirectory)
        var candidates = [
            executableDirectory + "/voices",
            (prefix == "/" ? "" : prefix) + "/share/bobao/voices",
        ]
        var folder = executableDirectory
        while folder != "/" && folder != "." {
            if FileSystem.exists(folder + "/Package.swift") {
                candidates.append(folder + "/voices")
                break
            }
            folder = FileSystem.parent(of: folder)
        }
        candidates += ["/usr/local/share/bobao/voices", "/usr/share/bobao/voices"]
        return candidates
    }

    public static func currentExecutablePath() -> String {
        FileSystem.resolvedPath("/proc/self/exe") ?? CommandLine.arguments[0]
    }
}
