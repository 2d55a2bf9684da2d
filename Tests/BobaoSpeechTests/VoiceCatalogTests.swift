@testable import BobaoSpeech
import Foundation
import Testing

struct VoiceCatalogTests {
    func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-voices-\(UUID())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func projectFileWinsOverBuiltInName() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try "name x\n".write(to: folder.appendingPathComponent("zh"), atomically: true, encoding: .utf8)
        let catalog = VoiceCatalog(directory: folder.path)
        #expect(catalog.resolve("zh") == .projectFile(path: folder.path + "/zh"))
        #expect(catalog.resolve("yue") == .builtIn(name: "yue"))
        #expect(catalog.resolve("../zh") == .builtIn(name: "../zh"))
        #expect(catalog.projectVoiceNames() == ["zh"])
    }

    @Test(arguments: ["zh", "en-us", "cmn-latn-pinyin", "sit/yue", "zh+f2"])
    func namesAreNotPaths(name: String) {
        #expect(VoiceCatalog.isValidName(name) == !name.contains("/"))
    }

    @Test func explicitFolderComesFirst() {
        let candidates = VoiceCatalog.candidateDirectories(
            environment: ["BOBAO_VOICES": "/opt/v"], executablePath: "/usr/bin/bobao")
        #expect(candidates == ["/opt/v"])
    }

    @Test func looksNextToTheExecutableThenInItsPrefixThenSystemFolders() {
        let candidates = VoiceCatalog.candidateDirectories(environment: [:], executablePath: "/opt/bobao/bin/bobao")
        #expect(candidates.first == "/opt/bobao/bin/voices")
        #expect(candidates.dropFirst().first == "/opt/bobao/share/bobao/voices")
        #expect(candidates.suffix(2) == ["/usr/local/share/bobao/voices", "/usr/share/bobao/voices"])
    }

    @Test func findsTheSourceCheckoutFromABuildFolder() throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let build = root.appendingPathComponent(".build/debug")
        try FileManager.default.createDirectory(at: build, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: root.appendingPathComponent("voices"), withIntermediateDirectories: true)
        try "".write(to: root.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        let catalog = VoiceCatalog.locate(environment: [:], executablePath: build.appendingPathComponent("bobao").path)
        #expect(catalog.directory == root.appendingPathComponent("voices").path)
    }

    @Test func theRepositoryVoiceExplainsWhyItExists() throws {
        let catalog = VoiceCatalog.locate(environment: [:])
        let directory = try #require(catalog.directory)
        let text = try String(contentsOfFile: directory + "/zh", encoding: .utf8)
        #expect(text.contains("dictrules 1"))  // the comment naming the shipped voice's fault
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("dictrules") })
    }

    /// The voice built into the program (for a `bobao` copied on its own) is the repository's voices/zh.
    @Test func theBuiltInVoiceIsTheRepositoryVoice() throws {
        let catalog = VoiceCatalog.locate(environment: [:])
        let directory = try #require(catalog.directory)
        let text = try String(contentsOfFile: directory + "/zh", encoding: .utf8)
        #expect(EmbeddedVoices.zh == text)
        let written = try EmbeddedVoices.path(of: "zh").get()
        #expect(try String(contentsOfFile: written, encoding: .utf8) == text)
        // A folder without zh still has it, built in; a folder with its own zh keeps its own.
        let empty = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: empty) }
        #expect(VoiceCatalog(directory: empty.path).resolve("zh") == .projectFile(path: written))
        #expect(VoiceCatalog(directory: directory).resolve("zh") == .projectFile(path: directory + "/zh"))
        // A BOBAO_VOICES that is no folder is an error to see, not papered over with the built-in voice.
        #expect(VoiceCatalog.locate(environment: ["BOBAO_VOICES": "/nonexistent"]).resolve("zh") == .builtIn(name: "zh"))
    }
}
