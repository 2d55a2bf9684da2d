import BobaoCore
import BobaoServer
import Foundation
import Testing

/// Loading the chimes folder: good files become chimes, bad ones are logged once and left out.
struct ChimeLibraryTests {
    func temporaryFolder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-chimes-\(UUID())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func loadsGoodFilesAndLogsEachBadOneOnce() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Half a second at 44.1 kHz: resampled to the player's 22 050 Hz.
        try write(WAVFile(sampleRate: 44100, samples: Array(repeating: 1000, count: 22050)).encoded(), to: folder + "/door-bell.wav")
        try write(Array("not a wav at all".utf8), to: folder + "/broken.wav")
        try write(WAVFile(sampleRate: 8000, samples: [1, 2]).encoded(), to: folder + "/two words.wav")
        try write(Array("# notes".utf8), to: folder + "/README.md")
        try FileManager.default.createDirectory(atPath: folder + "/folder.wav", withIntermediateDirectories: true)

        var lines: [String] = []
        let library = ChimeLibrary(directory: folder, sampleRate: 22050) { lines.append($0) }
        #expect(library.names == ["ding", "door-bell"])
        let door = try #require(library.samples(named: "door-bell"))
        #expect(door.count == 11025 && door.allSatisfy { $0 == 1000 })
        #expect(library.samples(named: "ding") == ChimeTone.twoTone(sampleRate: 22050))
        #expect(library.samples(named: "broken") == nil)
        #expect(library.samples(named: "missing") == nil)

        #expect(lines.count == 4, "\(lines)")
        #expect(lines.filter { $0.contains("broken.wav") } == ["<4>chime file \(folder)/broken.wav skipped: not a RIFF/WAVE file"], "a warning")
        #expect(lines.filter { $0.contains("two words.wav") }.count == 1)
        #expect(lines.contains { $0.contains("two words.wav skipped: a chime name holds only ASCII letters") })
        #expect(lines.contains("<4>chime file \(folder)/folder.wav skipped: not a regular file"))
        #expect(lines.contains("chimes from \(folder): door-bell"))
        #expect(!lines.contains { $0.contains("README") })
    }

    @Test func aDingFileReplacesTheBuiltInChime() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write(WAVFile(sampleRate: 22050, samples: [7, 8, 9]).encoded(), to: folder + "/ding.wav")
        let library = ChimeLibrary(directory: folder, sampleRate: 22050) { _ in }
        #expect(library.names == ["ding"])
        #expect(library.samples(named: "ding") == [7, 8, 9])
    }

    @Test func withoutAFolderOnlyTheBuiltInChimeIsThere() {
        var lines: [String] = []
        for directory in [nil, "/nonexistent/bobao/chimes"] {
            let library = ChimeLibrary(directory: directory, sampleRate: 16000) { lines.append($0) }
            #expect(library.names == [ChimeTone.builtInName])
            #expect(library.samples(named: "ding") == ChimeTone.twoTone(sampleRate: 16000))
        }
        #expect(lines.isEmpty)
    }

    @Test func chimeNamesAreFileNamesOnly() {
        #expect(ChimeLibrary.isValidName("door-bell_2"))
        for bad in ["", "a b", "../x", "x.y", "叮咚", ".hidden", String(repeating: "a", count: 65)] {
            #expect(!ChimeLibrary.isValidName(bad), "\(bad)")
        }
    }
}
