import BobaoCore
import BobaoTestSupport
import Foundation
import Testing

/// `bobao render` as a user runs it: the real binary, real files.
struct RenderCommandTests {
    func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("bobao-\(UUID())-\(name)").path
    }

    @Test func writesAPlayableWAVOfTheRightLength() throws {
        let path = temporaryPath("out.wav")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try BobaoBinary.run(["render", "新客户来了", "-o", path])
        #expect(result.status == 0, "\(result.stderr)")
        let wav = try WAVFile(decoding: [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(wav.sampleRate == 22050 && wav.channels == 1)
        // Five syllables at 175 wpm: about 1.5 s (the CLI reference gives 1.49 s).
        #expect(wav.duration > 1.2 && wav.duration < 1.8, "\(wav.duration) s")
        let analysis = SignalAnalysis(wav.samples, sampleRate: wav.sampleRate)
        #expect(analysis.peak > 5000)
        #expect(analysis.soundingDuration() > 0.8)
        // Other tools agree it is a WAV file of that length.
        let soxi = try runProgram("soxi", ["-D", path])
        #expect(abs((Double(soxi.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) - wav.duration) < 0.001)
    }

    @Test func readsTextFromStandardInputAndHonoursOptions() throws {
        let slow = temporaryPath("slow.wav"), fast = temporaryPath("fast.wav")
        defer { for p in [slow, fast] { try? FileManager.default.removeItem(atPath: p) } }
        let input = Data("请到三号窗口办理\n".utf8)
        #expect(try BobaoBinary.run(["render", "-", "-o", slow, "--rate", "120"], input: input).status == 0)
        #expect(try BobaoBinary.run(["render", "-", "--rate=300", "--pitch", "80", "-o", fast], input: input).status == 0)
        let slowWAV = try WAVFile(decoding: [UInt8](Data(contentsOf: URL(fileURLWithPath: slow))))
        let fastWAV = try WAVFile(decoding: [UInt8](Data(contentsOf: URL(fileURLWithPath: fast))))
        #expect(fastWAV.duration < 0.7 * slowWAV.duration)
    }

    @Test(arguments: [
        (["render", "你好", "--voice", "klingon", "-o", "/tmp/bobao-never.wav"], "unknown voice 'klingon'"),
        (["render", "你好", "-o", "/nonexistent-folder/out.wav"], "cannot write /nonexistent-folder/out.wav"),
        (["render", "   ", "-o", "/tmp/bobao-never.wav"], "empty TEXT"),
        (["render", "你好", "-o", "/tmp/bobao-never.wav", "--pitch", "120"], "--pitch must be 0 to 99, not '120'"),
        (["render", "你好"], "needs -o FILE.wav"),
        (["render", "你好", "-o", "/tmp/bobao-never.wav", "--rate", "fast"], "--rate must be 80 to 450 words a minute, not 'fast'"),
    ])
    func errorsAreOneLineNamingTheProblem(arguments: [String], message: String) throws {
        // Each case gets its own output path, so the cases can run side by side.
        let never = temporaryPath("never.wav")
        let arguments = arguments.map { $0 == "/tmp/bobao-never.wav" ? never : $0 }
        let result = try BobaoBinary.run(arguments)
        #expect(result.status != 0)
        // A failure is one line; a usage error (status 2) one line and a pointer to the help.
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == (result.status == 2 ? 2 : 1), "\(result.stderr)")
        #expect(result.status != 2 || lines[1] == "Run 'bobao render --help' for its options.")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: never), "a failed render must leave no file behind")
    }

    @Test func emptyStandardInputIsAnError() throws {
        let never = temporaryPath("never.wav")
        let result = try BobaoBinary.run(["render", "-", "-o", never], input: Data())
        #expect(result.status == 1)
        #expect(!FileManager.default.fileExists(atPath: never))
        #expect(result.stderr.contains("standard input held no text"))
    }

    @Test func voicesListsProjectAndBuiltInVoicesMarked() throws {
        let result = try BobaoBinary.run(["voices"])
        #expect(result.status == 0)
        let lines = result.stdoutText.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("project") && $0.hasSuffix(" zh") })
        #expect(lines.contains { $0.hasPrefix("built-in") && $0.contains("sit/yue") })
        #expect(lines.contains { $0.hasPrefix("built-in") && $0.contains("gmw/en ") })
    }

    @Test func voicesAreFoundThroughBOBAO_VOICES() throws {
        let folder = temporaryPath("voices")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let repositoryVoice = try String(contentsOfFile: #filePath.replacingOccurrences(
            of: "Tests/BobaoIntegrationTests/RenderCommandTests.swift", with: "voices/zh"), encoding: .utf8)
        try repositoryVoice.write(toFile: folder + "/counter", atomically: true, encoding: .utf8)
        let result = try BobaoBinary.run(["phonemes", "欢迎光临", "--voice", "counter"], environment: ["BOBAO_VOICES": folder])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.contains("55") && !result.stdoutText.contains("(en)"), "\(result.stdoutText)")
    }
}
