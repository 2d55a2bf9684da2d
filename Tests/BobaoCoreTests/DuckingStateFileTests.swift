import BobaoCore
import BobaoServer
import Foundation
import Testing

/// The state file next to the spool: written whole or not at all, removed when empty, and never a reason
/// for Bobao to stop (a damaged or unwritable file is logged and ducking goes on).
struct DuckingStateFileTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-ducking-\(UUID())").path
    let lines = RecordedLog()
    let stream = DuckedStream(index: 3, server: "pulseaudio", owner: "1 pacat pacat", original: [65536], ducked: [19661])

    init() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    func file() -> DuckingStateFile {
        let log = lines.eventLog
        return DuckingStateFile(spoolPath: folder + "/spool.db", log: { log($0) })
    }

    @Test func savedStreamsAreReadBackAndAnEmptySaveRemovesTheFile() throws {
        let state = file()
        #expect(state.path == folder + "/spool.db-ducking")
        #expect(state.load() == [])
        state.save([stream])
        #expect(state.exists)
        let attributes = try FileManager.default.attributesOfItem(atPath: state.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(state.load() == [stream])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["spool.db-ducking"], "no temporary left")
        state.save([])
        #expect(!state.exists)
        #expect(lines.written.isEmpty)
    }

    @Test func aDamagedFileIsLoggedAndIgnored() throws {
        let state = file()
        try Data([0xFF, 0xFE, 0x00, 0x41]).write(to: URL(fileURLWithPath: state.path))
        #expect(state.load() == [])
        #expect(lines.text.contains("the ducking state \(state.path) is damaged; ignored"))
        try ("bobao-ducking 1\nnonsense\n" + DuckingLedger.encode([stream]).dropFirst(16)).write(
            toFile: state.path, atomically: true, encoding: .utf8)
        #expect(state.load() == [stream])
        #expect(lines.text.contains("ignored 1 damaged line(s) of the ducking state"))
    }

    @Test func aLinkOrAHugeFileIsNotRead() throws {
        let state = file()
        try FileManager.default.createSymbolicLink(atPath: state.path, withDestinationPath: "/dev/zero")
        #expect(state.load() == [])
        #expect(lines.text.contains("is not a small regular file; ignored"))
        try FileManager.default.removeItem(atPath: state.path)
        _ = FileManager.default.createFile(atPath: state.path, contents: Data(count: 2 << 20))
        #expect(state.load() == [])
    }

    @Test func aFileThatCannotBeWrittenIsLoggedOnceUntilItCanAgain() throws {
        let log = lines.eventLog
        let state = DuckingStateFile(path: folder + "/gone/spool.db-ducking", log: { log($0) })
        state.save([stream])
        state.save([stream])
        #expect(lines.written.count == 1)
        #expect(lines.text.contains("cannot write the ducking state \(state.path): No such file or directory; ducking goes on"))
        try FileManager.default.createDirectory(atPath: folder + "/gone", withIntermediateDirectories: true)
        state.save([stream])
        #expect(lines.written.count == 2)
        #expect(lines.text.contains("can be written again"))
        #expect(state.load() == [stream])
    }
}
