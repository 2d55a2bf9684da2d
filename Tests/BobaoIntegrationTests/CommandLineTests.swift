import BobaoCore
import BobaoTestSupport
import Foundation
import Testing

/// The command line as a newcomer meets it: help everywhere, the version, errors as one line and a hint.
struct CommandLineTests {
    static let commands = ["serve", "say", "status", "cancel", "skip", "clear", "volume", "render", "normalize",
                           "voices", "phonemes"]

    @Test(arguments: commands)
    func everyCommandHasHelp(command: String) throws {
        for asked in [[command, "-h"], [command, "--help"], ["help", command], [command, "--voice", "zh", "--help"]]
        where asked.count < 4 || ["serve", "say", "render", "phonemes"].contains(command) {
            let result = try BobaoBinary.run(asked)
            #expect(result.status == 0, "\(asked): \(result.stderr)")
            #expect(result.stdoutText.hasPrefix("usage: bobao \(command)"), "\(asked): \(result.stdoutText)")
            #expect(result.stderr.isEmpty)
        }
    }

    @Test func theTopLevelHelpListsEveryCommandAndTheVersionIsPrinted() throws {
        let help = try BobaoBinary.run(["--help"])
        #expect(help.status == 0)
        for command in Self.commands { #expect(help.stdoutText.contains("\n  \(command) "), "\(command)") }
        for asked in ["--version", "version"] {
            let version = try BobaoBinary.run([asked])
            #expect(version.status == 0 && version.stdoutText == "bobao \(BobaoVersion.current)\n")
        }
    }

    @Test(arguments: [
        (["serve", "--bogus"], "unknown option --bogus", "bobao serve --help"),
        (["say", "--rate", "fast", "hi"], "--rate must be 80 to 450", "bobao say --help"),
        (["render", "hi"], "needs -o", "bobao render --help"),
        (["cancel"], "give one ID", "bobao cancel --help"),
        (["frobnicate"], "unknown command 'frobnicate'", "bobao help"),
        (["help", "frobnicate"], "no command named 'frobnicate'", "bobao help"),
        (["say", ""], "empty TEXT", "bobao say --help"),
        (["serve", "extra"], "serve takes no TEXT", "bobao serve --help"),
        (["normalize", " "], "empty TEXT", "bobao normalize --help"),
        (["say", "--token", "", "hi"], "--token must be", "bobao say --help"),
        (["phonemes", ""], "empty TEXT", "bobao phonemes --help"),
    ] as [([String], String, String)])
    func aUsageErrorIsOneLineAndAHint(arguments: [String], message: String, hint: String) throws {
        let result = try BobaoBinary.run(arguments)
        #expect(result.status == 2, "\(arguments)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 2, "\(arguments): \(result.stderr)")
        #expect(lines.first?.contains(message) == true, "\(arguments): \(result.stderr)")
        #expect(lines.last?.contains(hint) == true, "\(arguments): \(result.stderr)")
        #expect(result.stdout.isEmpty, "no usage dump")
    }

    @Test func renderRefusesTextBeyondItsLimit() throws {
        let result = try BobaoBinary.run(["render", "-o", "-"], input: Data(repeating: UInt8(ascii: "a"), count: 20_000))
        #expect(result.status == 1 && result.stdout.isEmpty)
        #expect(result.stderr.contains("render takes at most 16384"), "\(result.stderr)")
    }

    @Test func renderJoinsItsWordsLikeSayAndWritesWAVToStandardOutput() throws {
        let joined = try BobaoBinary.run(["render", "-o", "-", "新客户", "来了"])
        let quoted = try BobaoBinary.run(["render", "-o", "-", "新客户 来了"])
        #expect(joined.status == 0 && quoted.status == 0, "\(joined.stderr)\(quoted.stderr)")
        #expect(joined.stdout == quoted.stdout, "words joined with a space, as one quoted TEXT")
        let wav = try WAVFile(decoding: [UInt8](joined.stdout))
        #expect(wav.sampleRate == 22050 && wav.duration > 1.0, "\(wav.duration) s")
        #expect(SignalAnalysis(wav.samples, sampleRate: wav.sampleRate).peak > 5000)
    }

    @Test func phonemesShowWhatBobaoSaysAndRawWhatESpeakReads() throws {
        let normalized = try BobaoBinary.run(["phonemes", "128.50元"])
        #expect(normalized.status == 0, "\(normalized.stderr)")
        let lines = normalized.stdoutText.split(separator: "\n")
        let spoken = try BobaoBinary.run(["normalize", "128.50元"]).stdoutText.split(separator: "\n").first.map(String.init) ?? ""
        #expect(!spoken.contains("128") && lines.first.map(String.init) == spoken, "the text as it will be said: \(normalized.stdoutText)")
        let said = try BobaoBinary.run(["phonemes", "--raw", spoken])
        #expect(lines.count == 2 && lines[1] == said.stdoutText.split(separator: "\n").first, "the phonemes of the normalized text")
        let raw = try BobaoBinary.run(["phonemes", "--raw", "128.50元"])
        #expect(raw.status == 0 && raw.stdoutText.split(separator: "\n").count == 1)
        #expect(raw.stdoutText != said.stdoutText, "eSpeak alone reads the digits otherwise")
    }

    /// A `bobao` copied on its own, with no voices folder anywhere it looks, still speaks Bobao's Mandarin
    /// voice (built into the program), not eSpeak NG's zh, which reads Chinese as English pinyin.
    @Test func aCopiedBinaryStillHasItsMandarinVoice() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-copy-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("bobao").path
        // cp, not copyItem: a descriptor open for writing in this process, inherited by another test's child
        // across fork, would make exec fail with ETXTBSY.
        try runProgram("/bin/cp", [BobaoBinary.path, copy])
        let copied = try runProgram(copy, ["phonemes", "--raw", "新客户来了"])
        let original = try BobaoBinary.run(["phonemes", "--raw", "新客户来了"])
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(copied.stdoutText == original.stdoutText && !copied.stdoutText.contains("(en)"))
        let voices = try runProgram(copy, ["voices"])
        #expect(voices.stdoutText.contains("\nproject   zh  (built into bobao: the folder has no zh)\n"), "\(voices.stdoutText)")
        // Also next to a voices folder that lacks zh (chimes only).
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("voices/chimes"), withIntermediateDirectories: true)
        let besideAFolder = try runProgram(copy, ["phonemes", "--raw", "新客户来了"])
        #expect(besideAFolder.status == 0 && besideAFolder.stdoutText == original.stdoutText, "\(besideAFolder.stderr)")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("voices"))
        // A folder a run killed by a signal left behind (its process is gone: a shell's pid after it exited),
        // and one of a process still running (this test's), which stays.
        let gone = try runProgram("/bin/sh", ["-c", "echo $$"]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        let leftover = folder.appendingPathComponent("bobao-\(gone)-1a2b3c")
        let alive = folder.appendingPathComponent("bobao-\(getpid())-4d5e6f")
        for kept in [leftover, alive] {
            try FileManager.default.createDirectory(at: kept, withIntermediateDirectories: false)
            try Data("voice".utf8).write(to: kept.appendingPathComponent("zh"))
        }
        let exited = try runProgram("/bin/sh", ["-c", "TMPDIR=\(folder.path) '\(copy)' phonemes --raw 好 >/dev/null; ls '\(folder.path)'"])
        #expect(exited.stdoutText == "bobao\nbobao-\(getpid())-4d5e6f\n",
                "the private voices folder is removed at exit, a dead run's too: \(exited.stdoutText)")
    }

    /// Outside the journal the log's time stamps are local time with the zone's offset (a POSIX TZ, so no
    /// tzdata is needed): `2026-11-30T03:22:09.123+08:00`.
    @Test func logTimeStampsAreLocalTimeWithTheOffset() throws {
        let result = try BobaoBinary.run(["serve", "--no-spool", "--listen", "no-such-host.invalid:0"],
                                         environment: ["TZ": "CST-8", "JOURNAL_STREAM": ""])
        let first = try #require(result.stderr.split(separator: "\n").first { $0.contains(" bobao: ") })
        let stamp = first.prefix { $0 != " " }
        #expect(stamp.hasSuffix("+08:00") && stamp.count == 29, "\(first)")
    }
}

/// `--listen HOST:PORT` and `say --to HOST:PORT` take host names (getaddrinfo), as a shop's
/// `counter.local` would be given: here the machine's own name, which /etc/hosts or DNS resolves.
struct HostNameTests {
    @Test func aServerListensOnAHostNameAndSayReachesItByName() throws {
        var buffer = [CChar](repeating: 0, count: 256)
        #expect(gethostname(&buffer, buffer.count) == 0)
        let host = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #expect(!host.isEmpty && Int(host) == nil)
        // The name may stand for a LAN address, so the server needs a token to listen on it.
        let server = try ServerProcess(
            arguments: ["--listen", "\(host):0", "--token", "hostname-test", "--no-spool"], pulseServer: "unix:/nonexistent")
        defer { _ = server.stop() }
        let said = try BobaoBinary.run(["say", "--to", "\(host):\(server.port)", "--token", "hostname-test", "你好"])
        #expect(said.status == 0, "\(said.stderr)")
        #expect(said.stdoutText.hasSuffix("OK 1\n"), "\(said.stdoutText)")
    }

    /// localhost is 127.0.0.1 first: a port taken there is an error, never a quiet move to ::1.
    @Test func aTakenPortOnAHostNameIsAClearErrorNotAnotherAddress() throws {
        let taken = try ServerProcess(arguments: ["--no-spool"], pulseServer: "unix:/nonexistent")
        defer { _ = taken.stop() }
        let result = try BobaoBinary.run(["serve", "--no-spool", "--listen", "localhost:\(taken.port)"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("bind localhost:\(taken.port) (127.0.0.1:\(taken.port))"), "\(result.stderr)")
        #expect(result.stderr.contains("Address already in use") && !result.stderr.contains("sockaddr"), "\(result.stderr)")
    }

    @Test func anIPv6AddressInBracketsWorksForListenAndTo() throws {
        let server = try ServerProcess(arguments: ["--listen", "[::1]:0", "--no-spool"], pulseServer: "unix:/nonexistent")
        defer { _ = server.stop() }
        let said = try BobaoBinary.run(["say", "--to", "[::1]:\(server.port)", "你好"])
        #expect(said.status == 0 && said.stdoutText == "OK 1\n", "\(said.stderr)")
        // localhost is 127.0.0.1, then ::1: a client given localhost reaches a server on either.
        let byName = try BobaoBinary.run(["say", "--to", "localhost:\(server.port)", "再见"])
        #expect(byName.status == 0 && byName.stdoutText == "OK 2\n", "\(byName.stderr)")
    }
}

/// The commands that only synthesize (render, phonemes) never touch the sound server, and serve connects
/// to it only through its player: eSpeak NG opens no audio device (a sound server that accepts and never
/// answers would otherwise hold every start for libpulse's 30 s connect timeout).
struct SynthesisWithoutSoundServerTests {
    @Test func renderAndPhonemesNeverConnectToTheSoundServer() throws {
        let listener = try CountingUnixListener()
        for arguments in [["render", "-o", "-", "你好"], ["phonemes", "你好"], ["voices"]] {
            let result = try BobaoBinary.run(arguments, environment: ["PULSE_SERVER": "unix:" + listener.path])
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        #expect(listener.accepted == 0, "connections to the sound server: \(listener.accepted)")
    }
}

/// A Unix socket that takes connections and never answers: a sound server that hangs. Connections wait in
/// its backlog (the client's connect succeeds); `accepted` takes and counts them.
final class CountingUnixListener {
    let path: String
    private let fd: Int32

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-pa-\(UUID().uuidString.prefix(8))").path
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else { throw POSIXError(.EADDRINUSE) }
    }

    /// Connections made so far (each accepted and closed).
    var accepted: Int {
        var count = 0
        while case let client = accept(fd, nil, nil), client >= 0 {
            close(client)
            count += 1
        }
        return count
    }

    deinit {
        close(fd)
        unlink(path)
    }
}
