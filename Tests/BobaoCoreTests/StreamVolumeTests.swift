import BobaoAudio
import BobaoCore
import CSQLite
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import BobaoServer

/// The volume command's server side without a sound server: the spool's `settings` table (kept across a
/// reopen, created in an older spool, damage refused), and `StreamVolume` applying, storing and answering.
@Suite struct StreamVolumeTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-volume-\(UUID())").path

    init() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    /// `set`'s reply, waited for.
    func set(_ percent: Int, on volume: StreamVolume) -> String? {
        let reply = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        volume.set(percent, by: "127.0.0.1:5000") { text in
            reply.withLock { $0 = text }
            done.signal()
        }
        guard done.wait(timeout: .now() + 10) == .success else { return nil }
        return reply.withLock { $0 }
    }

    func runSQL(_ sql: String, on path: String) {
        var handle: OpaquePointer?
        #expect(sqlite3_open(path, &handle) == SQLITE_OK)
        #expect(sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)
    }

    // MARK: The spool

    @Test func theVolumeIsKeptAcrossAReopen() throws {
        let path = folder + "/kept.db"
        do {
            let spool = try AnnouncementSpool(path: path)
            #expect(try spool.streamVolume() == nil, "a new spool has none")
            try spool.storeStreamVolume(70)
            try spool.storeStreamVolume(0)
            #expect(try spool.streamVolume() == 0)
            spool.close()
        }
        let spool = try AnnouncementSpool(path: path)
        #expect(try spool.streamVolume() == 0)
        #expect(spool.lastID == 0, "a setting is no announcement")
        #expect(throws: AnnouncementSpool.Failure.self) { try spool.storeStreamVolume(101) }
        #expect(throws: AnnouncementSpool.Failure.self) { try spool.storeStreamVolume(-1) }
        #expect(try spool.streamVolume() == 0)
        spool.close()
    }

    @Test func aSpoolFromBeforeTheSettingsTableGetsOne() throws {
        let path = folder + "/old.db"
        try AnnouncementSpool(path: path).close()
        runSQL("DROP TABLE settings", on: path)
        let spool = try AnnouncementSpool(path: path)
        #expect(try spool.streamVolume() == nil)
        try spool.storeStreamVolume(40)
        #expect(try spool.streamVolume() == 40)
        spool.close()
    }

    @Test(arguments: ["250", "-5", "'loud'", "4.5"])
    func aDamagedVolumeIsAnErrorThatSaysHowToRemoveIt(stored: String) throws {
        let path = folder + "/damaged-\(UUID()).db"
        try AnnouncementSpool(path: path).close()
        runSQL("INSERT INTO settings (key, value) VALUES ('stream_volume', \(stored))", on: path)
        let spool = try AnnouncementSpool(path: path)
        defer { spool.close() }
        let error = #expect(throws: AnnouncementSpool.Failure.self) { try spool.streamVolume() }
        #expect(error?.description.contains("damaged setting stream_volume") == true, "\(String(describing: error))")
        #expect(error?.description.contains("DELETE FROM settings WHERE key = 'stream_volume'") == true)
    }

    @Test func nothingIsStoredIntoADeletedSpool() throws {
        let path = folder + "/deleted.db"
        let spool = try AnnouncementSpool(path: path)
        defer { spool.close() }
        try FileManager.default.removeItem(atPath: path)
        let error = #expect(throws: AnnouncementSpool.Failure.self) { try spool.storeStreamVolume(50) }
        #expect(error?.description.contains("deleted") == true, "\(String(describing: error))")
    }

    // MARK: StreamVolume

    @Test func aSavedVolumeIsAppliedAtStartAndLogged() throws {
        let output = FakeAudioOutput(), log = RecordedLog()
        let board = try AnnouncementBoard(capacity: 4)
        let volume = StreamVolume(output: output, board: board, saved: 70, log: { log.eventLog($0) })
        #expect(output.volumePercent == 70)
        #expect(volume.report() == "OK volume 70\n")
        #expect(log.text.contains("stream volume 70 % (set by `bobao volume`)"))

        let unset = FakeAudioOutput(), unsetLog = RecordedLog()
        let fresh = StreamVolume(output: unset, board: board, saved: nil, log: { unsetLog.eventLog($0) })
        #expect(unset.volumePercent == nil, "the sound server's own volume is left alone")
        #expect(fresh.report() == "OK volume not set (the sound server's own)\n")
        #expect(unsetLog.written.isEmpty, "nothing to say at start")
    }

    @Test func aVolumeSetIsAppliedStoredAndAnswered() throws {
        let path = folder + "/set.db"
        let output = FakeAudioOutput(), log = RecordedLog()
        do {
            let spool = try AnnouncementSpool(path: path)
            let board = try AnnouncementBoard(capacity: 4, spool: spool)
            let volume = StreamVolume(output: output, board: board, saved: try spool.streamVolume(), log: { log.eventLog($0) })
            #expect(set(35, on: volume) == "OK volume set to 35\n")
            #expect(output.volumePercent == 35)
            #expect(volume.percent == 35 && volume.report() == "OK volume 35\n")
            #expect(log.text.contains("stream volume set to 35 % by 127.0.0.1:5000 (was the sound server's own)"))
            #expect(set(35, on: volume) == "OK volume set to 35\n", "the same again")
            #expect(log.written.filter { $0.contains("stream volume set to") }.count == 1, "the same again is not logged")
            #expect(set(60, on: volume) == "OK volume set to 60\n")
            #expect(log.text.contains("stream volume set to 60 % by 127.0.0.1:5000 (was 35 %)"))
            board.close()
            spool.close()
        }
        let spool = try AnnouncementSpool(path: path)
        #expect(try spool.streamVolume() == 60)
        spool.close()
    }

    @Test func withoutASpoolTheReplySaysItIsKeptInMemoryOnly() throws {
        let output = FakeAudioOutput(), log = RecordedLog()
        let volume = StreamVolume(output: output, board: try AnnouncementBoard(capacity: 4), saved: nil, log: { log.eventLog($0) })
        #expect(set(20, on: volume) == "OK volume set to 20 (in memory only: --no-spool)\n")
        #expect(output.volumePercent == 20)
        #expect(log.text.contains("stream volume set to 20 % by 127.0.0.1:5000 (was the sound server's own) (in memory only: --no-spool)"))
    }

    @Test func aVolumeThatCannotBeStoredIsRefusedAndChangesNothing() throws {
        let path = folder + "/gone.db"
        let output = FakeAudioOutput(), log = RecordedLog()
        let spool = try AnnouncementSpool(path: path)
        let board = try AnnouncementBoard(capacity: 4, spool: spool)
        let volume = StreamVolume(output: output, board: board, saved: 50, log: { log.eventLog($0) })
        try FileManager.default.removeItem(atPath: path)
        let reply = try #require(set(80, on: volume))
        #expect(reply.hasPrefix("ERR spool-failed the volume was not changed: the spool \(path) was"), "\(reply)")
        #expect(reply.hasSuffix("\n") && reply.dropLast().allSatisfy { $0 != "\n" }, "one line")
        #expect(output.volumePercent == 50 && volume.percent == 50)
        #expect(log.text.contains("stream volume not changed to 80 % for 127.0.0.1:5000"))
        board.close()
        spool.close()
    }

    @Test func statusShowsTheVolumeOrNull() throws {
        let board = try AnnouncementBoard(capacity: 4)
        let output = OutputStatus(state: "playing", sink: "auto_null")
        let set = StatusReport.line(uptimeSeconds: 1, output: output, volume: 70, board: board.snapshot)
        #expect(set.contains(#""sound":{"state":"playing","sink":"auto_null","sinks":null,"reason":null,"last_error":null,"volume":70}"#), "\(set)")
        let unset = StatusReport.line(uptimeSeconds: 1, output: output, volume: nil, board: board.snapshot)
        #expect(unset.contains(#""last_error":null,"volume":null}"#), "\(unset)")
    }
}
