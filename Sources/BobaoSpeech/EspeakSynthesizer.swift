import BobaoCore
import BobaoPlatform
import CEspeakNG
import Dispatch
import Glibc
import Synchronization

/// libespeak-ng, in process, in RETRIEVAL mode: samples come back through the synth callback, and the
/// callback that carries `espeakEVENT_MSG_TERMINATED` ends the message.
///
/// eSpeak NG has one global engine per process, so there is one `EspeakSynthesizer` (`shared()`), and
/// every call into the library runs on its `EngineThread`. Text is never interpreted as SSML.
public final class EspeakSynthesizer: Synthesizer {
    public let sampleRate: Int
    public let voices: VoiceCatalog
    private let thread: EngineThread
    /// Set by `cancel()` from any thread, read by the synth callback, which then returns 1 to abort.
    private let cancelRequested = Atomic<Bool>(false)
    /// Touched only on the engine thread.
    nonisolated(unsafe) private var currentVoice: String?
    // (Also engine-thread only: `builtInNamesCache`, `shortCopies`.)

    private static let instance = Mutex<Result<EspeakSynthesizer, SpeechError>?>(nil)

    /// The process's engine, started on first use with the voices folder `VoiceCatalog.locate()` finds.
    public static func shared() throws(SpeechError) -> EspeakSynthesizer {
        let result = instance.withLock { cached in
            if let cached { return cached }
            let made = Result { () throws(SpeechError) in try EspeakSynthesizer(voices: .locate()) }
            cached = made
            return made
        }
        return try result.get()
    }

    /// Milliseconds of audio per callback: small, so the first samples arrive quickly.
    static let callbackMilliseconds: Int32 = 20

    private init(voices: VoiceCatalog) throws(SpeechError) {
        self.voices = voices
        thread = EngineThread(name: "bobao.espeak")
        let rate: Int32
        do {
            rate = try thread.run {
                let rate = espeak_Initialize(
                    AUDIO_OUTPUT_RETRIEVAL, EspeakSynthesizer.callbackMilliseconds, nil, espeakINITIALIZE_DONT_EXIT)
                if rate > 0 { espeak_SetSynthCallback(synthCallback) }
                return rate
            }
        } catch {
            throw .engineUnavailable("\(error)")
        }
        guard rate > 0 else { throw .engineUnavailable("espeak_Initialize returned \(rate); is espeak-ng-data installed?") }
        sampleRate = Int(rate)
    }

    // MARK: Voices

    /// Selects `name` on the engine: `voices/NAME` by path, else eSpeak's built-in voice. Engine thread only.
    private func selectVoice(_ name: String) throws(SpeechError) {
        guard currentVoice != name else { return }
        currentVoice = nil
        let status: espeak_ERROR
        switch voices.resolve(name) {
        case .projectFile(let path):
            guard let loadable = loadablePath(path) else { throw .unknownVoice(name) }
            status = espeak_SetVoiceByFile(loadable)
        case .builtIn(let builtIn):
            // espeak_SetVoiceByName falls back to some other voice for a name it does not know, so the
            // name is checked against eSpeak's own list first.
            let base = builtIn.split(separator: "+", maxSplits: 1).first.map(String.init) ?? builtIn
            guard VoiceCatalog.isValidName(builtIn), builtInNames.contains(base) else {
                if let problem = voices.problem { throw .voiceUnavailable(voice: name, reason: problem) }
                throw .unknownVoice(name)
            }
            status = espeak_SetVoiceByName(builtIn)
        case .unavailable(let name, let reason):
            throw .voiceUnavailable(voice: name, reason: reason)
        }
        guard status == EE_OK else {
            if let problem = voices.problem { throw .voiceUnavailable(voice: name, reason: problem) }
            throw .unknownVoice(name)
        }
        currentVoice = name
    }

    /// Every name `espeak_SetVoiceByName` understands: identifiers (`sit/yue`), their last part (`yue`),
    /// and language codes. Engine thread only.
    private var builtInNames: Set<String> {
        if let cached = builtInNamesCache { return cached }
        var names: Set<String> = []
        for voice in listBuiltInVoices() {
            names.insert(voice.identifier)
            if let last = voice.identifier.split(separator: "/").last { names.insert(String(last)) }
            names.formUnion(voice.languages)
        }
        builtInNamesCache = names
        return names
    }

    nonisolated(unsafe) private var builtInNamesCache: Set<String>?

    /// eSpeak NG 1.51 lower-cases a voice file's path and copies it into a small fixed buffer, so it fails
    /// to load a path with capitals or over 59 bytes. Such a file is loaded from a private copy whose path
    /// it can read. Engine thread only.
    private func loadablePath(_ path: String) -> String? {
        guard path.utf8.count > 59 || path != path.lowercased() else { return path }
        if let copy = shortCopies[path] { return copy }
        guard let name = path.split(separator: "/").last?.lowercased(), name.utf8.count <= 32 else { return nil }
        // In /tmp, whatever TMPDIR says: the copy's path must stay short. Removed at exit (PrivateFolder).
        guard case .success(let folder) = PrivateFolder.make(in: "/tmp") else { return nil }
        let copy = folder + "/" + name
        guard (try? FileSystem.write(FileSystem.read(path), to: copy)) != nil else { return nil }
        shortCopies[path] = copy
        return copy
    }

    nonisolated(unsafe) private var shortCopies: [String: String] = [:]

    /// Every voice name a message may ask for: the project's voices, then every name eSpeak NG's built-in
    /// voices answer to (identifiers, their last part, language codes); a `+variant` may follow any of them.
    public func knownVoiceNames() -> Set<String> {
        let builtIn = (try? thread.run { [self] in builtInNames }) ?? []
        return builtIn.union(voices.projectVoiceNames())
    }

    /// eSpeak's built-in voices: identifier and the first of its languages.
    public func builtInVoices() -> [(identifier: String, language: String)] {
        ((try? thread.run { listBuiltInVoices() }) ?? []).map { ($0.identifier, $0.languages.first ?? "") }
    }

    // MARK: Synthesis

    @discardableResult
    public func synthesize(
        _ text: String,
        parameters: SpeechParameters,
        onEvent: @escaping @Sendable (SynthesisEvent) -> Void
    ) throws(SpeechError) -> SynthesisOutcome {
        guard !text.allSatisfy(\.isWhitespace) else { throw .emptyText }
        do { try parameters.validate() } catch { throw .invalidParameters(error.description) }
        let outcome: Result<SynthesisOutcome, SpeechError>
        do {
            outcome = try thread.run { [self] in
                Result { () throws(SpeechError) in try synthesizeOnEngineThread(text, parameters, onEvent) }
            }
        } catch {
            throw .engineUnavailable("\(error)")
        }
        return try outcome.get()
    }

    private func synthesizeOnEngineThread(
        _ text: String, _ parameters: SpeechParameters, _ onEvent: @escaping @Sendable (SynthesisEvent) -> Void
    ) throws(SpeechError) -> SynthesisOutcome {
        try selectVoice(parameters.voice)
        espeak_SetParameter(espeakRATE, Int32(parameters.rate), 0)
        espeak_SetParameter(espeakPITCH, Int32(parameters.pitch), 0)
        espeak_SetParameter(espeakVOLUME, Int32(parameters.volume), 0)
        cancelRequested.store(false, ordering: .sequentiallyConsistent)
        let context = CallbackContext(onEvent: onEvent) { [self] in
            cancelRequested.load(ordering: .sequentiallyConsistent)
        }
        activeContext = context
        defer { activeContext = nil }
        // Plain text only: no espeakSSML and no espeakPHONEMES, whatever arrives from the network.
        let flags = UInt32(espeakCHARS_UTF8 | espeakENDPAUSE)
        let status = text.withCString { pointer in
            espeak_Synth(pointer, strlen(pointer) + 1, 0, POS_CHARACTER, 0, flags, nil, nil)
        }
        guard status == EE_OK else { throw .synthesisFailed(code: status.rawValue) }
        // RETRIEVAL mode synthesizes on eSpeak's own thread; wait for the callback that ends the message.
        context.finished.wait()
        if context.cancelled {
            espeak_Cancel()  // Stop eSpeak's thread before the next message can start.
        }
        return context.cancelled ? .cancelled : .completed
    }

    public func cancel() {
        cancelRequested.store(true, ordering: .sequentiallyConsistent)
    }

    // MARK: Phonemes

    /// The phoneme mnemonics eSpeak would speak for `text` with `voice`, clause by clause, as `espeak-ng -x`
    /// prints them (a switch to another language shows as `(en)` and the like).
    public func phonemes(of text: String, voice: String) throws(SpeechError) -> String {
        let result: Result<String, SpeechError>
        do {
            result = try thread.run { [self] in
                Result { () throws(SpeechError) in
                    try selectVoice(voice)
                    var clauses: [String] = []
                    text.withCString { start in
                        var cursor: UnsafeRawPointer? = UnsafeRawPointer(start)
                        while cursor != nil {
                            guard let phonemes = espeak_TextToPhonemes(&cursor, espeakCHARS_UTF8, 0) else { break }
                            clauses.append(String(cString: phonemes))
                        }
                    }
                    return clauses.joined(separator: " ")
                }
            }
        } catch {
            throw .engineUnavailable("\(error)")
        }
        return try result.get()
    }
}

private struct BuiltInVoice: Sendable {
    let identifier: String
    let languages: [String]
}

/// Reads `espeak_ListVoices`. Engine thread only.
private func listBuiltInVoices() -> [BuiltInVoice] {
    var out: [BuiltInVoice] = []
    guard var cursor = espeak_ListVoices(nil) else { return out }
    while let voice = cursor.pointee {
        let identifier = voice.pointee.identifier.map { String(cString: $0) } ?? ""
        // `languages` is a list of (priority byte, NUL-terminated name) ended by an empty name.
        var languages: [String] = []
        if var entry = voice.pointee.languages {
            while entry.pointee != 0 {
                let language = String(cString: entry + 1)
                if language.isEmpty { break }
                languages.append(language)
                entry += 1 + language.utf8.count + 1
            }
        }
        out.append(BuiltInVoice(identifier: identifier, languages: languages))
        cursor += 1
    }
    return out
}

/// The message being synthesized. eSpeak NG leaves `user_data` unset on some event lists in RETRIEVAL
/// mode, so the callback finds its context here instead; it is set and read only on the engine thread.
nonisolated(unsafe) private var activeContext: CallbackContext?

/// Per-message state the synth callback works on; used only on the engine thread.
private final class CallbackContext {
    let onEvent: @Sendable (SynthesisEvent) -> Void
    let isCancelRequested: () -> Bool
    /// Signalled by the callback that ends the message, normally or by cancellation.
    let finished = DispatchSemaphore(value: 0)
    var cancelled = false

    init(onEvent: @escaping @Sendable (SynthesisEvent) -> Void, isCancelRequested: @escaping () -> Bool) {
        self.onEvent = onEvent
        self.isCancelRequested = isCancelRequested
    }
}

/// The synth callback: forwards audio, turns MSG_TERMINATED into `.end`, and returns 1 to abort a
/// cancelled message.
private let synthCallback: @convention(c) (
    UnsafeMutablePointer<Int16>?, Int32, UnsafeMutablePointer<espeak_EVENT>?
) -> Int32 = { wav, count, events in
    guard let context = activeContext else { return 0 }
    if context.cancelled { return 1 }
    if context.isCancelRequested() {
        // Returning 1 aborts the message; eSpeak sends no MSG_TERMINATED for it, so end it here.
        context.cancelled = true
        context.onEvent(.end(cancelled: true))
        context.finished.signal()
        return 1
    }
    if let wav, count > 0 {
        context.onEvent(.audio(UnsafeBufferPointer(start: wav, count: Int(count))))
    }
    guard var event = events else { return 0 }
    while event.pointee.type != espeakEVENT_LIST_TERMINATED {
        if event.pointee.type == espeakEVENT_MSG_TERMINATED {
            context.onEvent(.end(cancelled: false))
            context.finished.signal()
        }
        event += 1
    }
    return 0
}
