import BobaoCore
import BobaoPlatform
import BobaoServer
import BobaoTestSupport
import CSQLite
import Foundation
import Testing

extension SoundSuites {
    /// The spool's faults against the real server: a damaged WAL, a spool deleted or renamed while running,
    /// a second server through a link, tampered rows, file modes, ids across restarts, a wall-clock jump,
    /// and group commit on a disk with slow fsync.
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct SpoolFaultTests {
        let sound: PrivatePulseServer
        let state: String

        init() throws {
            sound = try PrivatePulseServer(sinkName: "spool_faults")
            state = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-faults-\(UUID())").path
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        }

        /// A sound server address nobody listens on: announcements are accepted and stay queued.
        private func silentPulse() throws -> PrivatePulseServer {
            let pulse = try PrivatePulseServer(sinkName: "spool_faults_off")
            pulse.stop()
            return pulse
        }

        private func serve(_ spool: String, pulse: String, environment: [String: String] = [:]) -> ProgramResult? {
            try? BobaoBinary.run(
                ["serve", "--listen", "127.0.0.1:0", "--spool", spool],
                environment: environment.merging(["PULSE_SERVER": pulse]) { $1 })
        }

        /// Accepts five lines while no sound server is there, kills the server with -9 and returns the
        /// spool's path, with its frames still in the -wal file.
        private func spoolWithFramesInTheWAL(_ name: String) throws -> String {
            let spool = state + "/\(name).db"
            let log = try acceptWithoutSoundThenKill(["一号", "二号", "三号", "四号", "五号"], spool: spool)
            #expect(!log.contains("checkpoint"))
            let wal = try FileManager.default.attributesOfItem(atPath: spool + "-wal")[.size] as? Int ?? 0
            #expect(wal > 32 + 24 + 4096, "the -wal file holds the frames (no checkpoint happened): \(wal) bytes")
            return spool
        }

        /// Accepts `lines` while no sound server is there, kills the server with -9, and returns its log.
        /// The silent sound server is returned too, for starting it later.
        @discardableResult
        private func acceptWithoutSoundThenKill(
            _ lines: [String], spool: String, arguments: [String] = [], pulse: PrivatePulseServer? = nil
        ) throws -> String {
            let pulse = try pulse ?? silentPulse()
            let bobao = try ServerProcess(arguments: ["--spool", spool] + arguments, pulseServer: pulse.address)
            #expect(try bobao.exchange(lines.map { $0 + "\n" }.joined()) == lines.indices.map { "OK \($0 + 1)" })
            #expect(bobao.stop(signal: SIGKILL) == 128 + SIGKILL)
            return bobao.log
        }

        private func expectStartUpError(_ result: ProgramResult?, saying text: String) {
            #expect(result?.status == 1, "a start-up error, not a crash: \(result?.stderr ?? "")")
            #expect(result?.stderr.contains(text) == true, "\(result?.stderr ?? "")")
        }

        private func expectDamageAdvice(_ result: ProgramResult?, _ spool: String) {
            #expect(result?.status == 1, "a start-up error, not a crash: \(result?.stderr ?? "")")
            let stderr = result?.stderr ?? ""
            #expect(stderr.contains("committed announcements were lost"), "\(stderr)")
            for file in [spool, spool + "-wal", spool + "-shm", spool + "-hwm"] { #expect(stderr.contains(file)) }
            #expect(stderr.contains("--no-spool"))
        }

        @Test func aDamagedWALIsAStartUpError() throws {
            // Flipped bytes in the last frame: SQLite silently drops it, the counter notices.
            let flipped = try spoolWithFramesInTheWAL("flipped")
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: flipped + "-wal"))
            let end = try handle.seekToEnd()
            try handle.seek(toOffset: end - 200)
            let bytes = try handle.read(upToCount: 16) ?? Data()
            try handle.seek(toOffset: end - 200)
            try handle.write(contentsOf: Data(bytes.map { ~$0 }))
            try handle.close()
            expectDamageAdvice(serve(flipped, pulse: sound.address), flipped)

            // A truncated -wal file: the last frames are gone.
            let truncated = try spoolWithFramesInTheWAL("truncated")
            let size = try FileManager.default.attributesOfItem(atPath: truncated + "-wal")[.size] as? Int ?? 0
            #expect(truncate(truncated + "-wal", off_t(size - 1000)) == 0)
            expectDamageAdvice(serve(truncated, pulse: sound.address), truncated)
            // Still refused on a second try (the check did not "repair" anything).
            expectDamageAdvice(serve(truncated, pulse: sound.address), truncated)

            // The counter file missing while the database holds a spool.
            let lost = try spoolWithFramesInTheWAL("lost-counter")
            try FileManager.default.removeItem(atPath: lost + "-hwm")
            expectStartUpError(serve(lost, pulse: sound.address), saying: "\(lost)-hwm is missing")
        }

        @Test func aSpoolDeletedOrRenamedWhileRunningRefusesLinesLoudly() throws {
            let spool = state + "/deleted.db"
            let bobao = try ServerProcess(arguments: ["--spool", spool], pulseServer: sound.address)
            #expect(try bobao.exchange("一号\n") == ["OK 1"])
            #expect(unlink(spool) == 0)
            let replies = try bobao.exchange("二号\n三号\n四号\n")
            #expect(replies.count == 3)
            #expect(replies.allSatisfy { $0.hasPrefix("ERR spool-failed ") && $0.contains(spool) }, "\(replies)")
            #expect(replies.first?.contains("deleted") == true)
            // Still serving: other requests are answered, what was accepted before is spoken.
            #expect(try bobao.exchange("\u{1}\n") == ["ERR bad-text " + LineProtocol.Refusal.controlCharacters.reason])
            // Loud, once. (The log is read through a pipe: the bad-text refusal, logged after the spool
            // failure, shows that the log has caught up.)
            #expect(bobao.waitForLog(": bad-text ("))
            #expect(bobao.log.components(separatedBy: "SPOOL FAILED").count == 2, "\(bobao.log)")
            #expect(bobao.waitForLog("spoke #1"))
            #expect(bobao.stop() == 0)

            let renamed = state + "/renamed.db"
            let second = try ServerProcess(arguments: ["--spool", renamed], pulseServer: sound.address)
            #expect(try second.exchange("一号\n") == ["OK 1"])
            #expect(rename(renamed, renamed + ".moved") == 0)
            let refused = try second.exchange("二号\n三号\n")
            #expect(refused.allSatisfy { $0.hasPrefix("ERR spool-failed ") && $0.contains("renamed") }, "\(refused)")
            // Put back, it works again, and the refusals are summed up.
            #expect(rename(renamed + ".moved", renamed) == 0)
            #expect(try second.exchange("四号\n") == ["OK 4"])
            #expect(second.waitForLog("spool writes work again"))
            #expect(second.log.components(separatedBy: "SPOOL FAILED").count == 2, "\(second.log)")
            #expect(second.stop() == 0)

            // The write-ahead log is where commits go first: without it they would be lost on a crash.
            let walless = state + "/walless.db"
            let third = try ServerProcess(arguments: ["--spool", walless], pulseServer: sound.address)
            #expect(try third.exchange("一号\n") == ["OK 1"])
            #expect(unlink(walless + "-wal") == 0)
            let lost = try third.exchange("二号\n")
            #expect(lost.count == 1 && lost[0].hasPrefix("ERR spool-failed ") && lost[0].contains("-wal"), "\(lost)")
            #expect(third.stop() == 0)
            #expect(!third.log.contains("accepted #2"))
        }

        @Test func aSecondServerThroughAHardLinkOrASymlinkIsRefused() throws {
            let spool = state + "/shared.db"
            let first = try ServerProcess(arguments: ["--spool", spool], pulseServer: sound.address)
            #expect(link(spool, state + "/hard.db") == 0)
            #expect(symlink(spool, state + "/soft.db") == 0)
            for other in [spool, state + "/hard.db", state + "/soft.db"] {
                let second = serve(other, pulse: sound.address)
                #expect(second?.status == 1)
                #expect(second?.stderr.contains("is in use by another bobao serve") == true, "\(second?.stderr ?? "")")
            }
            #expect(!FileManager.default.fileExists(atPath: spool + ".lock"), "the lock is on the database itself")
            #expect(try first.exchange("好\n") == ["OK 1"])
            #expect(first.stop() == 0)
        }

        @Test func tamperedValuesAreAStartUpErrorNotACrash() throws {
            let pulse = try silentPulse()
            let base = state + "/base.db"
            let bobao = try ServerProcess(arguments: ["--spool", base], pulseServer: pulse.address)
            #expect(try bobao.exchange("一号\n二号\n") == ["OK 1", "OK 2"])
            #expect(bobao.stop() == 0)
            let tampers = [
                "UPDATE announcements SET id = -5 WHERE id = 1",
                "UPDATE announcements SET id = 9223372036854775807 WHERE id = 2",
                "UPDATE announcements SET accepted_at = -9223372036854775808 WHERE id = 1",
                "UPDATE announcements SET accepted_at = 'soon' WHERE id = 1",
                "UPDATE announcements SET text = CAST(X'E4B8C0FF' AS TEXT) WHERE id = 1",
                "UPDATE announcements SET text = '' WHERE id = 2",
                "UPDATE announcements SET text = CAST(X'E4B88000E4B880' AS TEXT) WHERE id = 2",
                "UPDATE announcements SET remaining_ms = -1 WHERE id = 1",
                "UPDATE announcements SET saved_boot_ms = 9223372036854775807 WHERE id = 2",
                "UPDATE meta SET value = -1 WHERE key = 'last_id'",
                // In range for SQLite, but no ids would be left to give.
                "UPDATE announcements SET id = 9223372036854775806 WHERE id = 2",
                "UPDATE meta SET value = 9007199254740993 WHERE key = 'last_id'",
            ]
            for (index, tamper) in tampers.enumerated() {
                let copy = state + "/tampered-\(index).db"
                try FileManager.default.copyItem(atPath: base, toPath: copy)
                try FileManager.default.copyItem(atPath: base + "-hwm", toPath: copy + "-hwm")
                if FileManager.default.fileExists(atPath: base + "-wal") {
                    try FileManager.default.copyItem(atPath: base + "-wal", toPath: copy + "-wal")
                }
                try sqlite(copy, tamper)
                let result = serve(copy, pulse: pulse.address)
                #expect(result?.status == 1, "\(tamper): exit 1, not a signal: \(result?.status ?? -1) \(result?.stderr ?? "")")
                #expect(result?.stderr.contains("spool \(copy)") == true, "\(tamper): \(result?.stderr ?? "")")
                #expect(result?.stderr.contains("damaged") == true, "\(tamper): \(result?.stderr ?? "")")
            }
            // A damaged counter file, too.
            let copy = state + "/tampered-counter.db"
            try FileManager.default.copyItem(atPath: base, toPath: copy)
            if FileManager.default.fileExists(atPath: base + "-wal") {
                try FileManager.default.copyItem(atPath: base + "-wal", toPath: copy + "-wal")
            }
            try Data("-3\n".utf8).write(to: URL(fileURLWithPath: copy + "-hwm"))
            expectStartUpError(serve(copy, pulse: pulse.address), saying: "\(copy)-hwm is damaged")

            // Two ids short of the end: the server gives the last one, then refuses; it never gives an id it
            // would refuse at its next start.
            let nearEnd = state + "/near-end.db"
            let last = AnnouncementSpool.largestID - 2
            try FileManager.default.copyItem(atPath: base, toPath: nearEnd)
            if FileManager.default.fileExists(atPath: base + "-wal") {
                try FileManager.default.copyItem(atPath: base + "-wal", toPath: nearEnd + "-wal")
            }
            try sqlite(nearEnd, "UPDATE meta SET value = \(last) WHERE key = 'last_id'")
            try Data(String(format: "%019llu\n", last).utf8).write(to: URL(fileURLWithPath: nearEnd + "-hwm"))
            let server = try ServerProcess(arguments: ["--spool", nearEnd], pulseServer: pulse.address)
            let replies = try server.exchange("三号\n四号\n")
            #expect(replies.first == "OK \(last + 1)")
            #expect(replies.last?.hasPrefix("ERR spool-failed no announcement ids are left") == true, "\(replies)")
            #expect(server.stop() == 0)
            let restarted = try ServerProcess(arguments: ["--spool", nearEnd], pulseServer: pulse.address)
            #expect(restarted.stop() == 0)
        }

        @Test func idsContinueAfterARestartWithAnEmptySpool() throws {
            let spool = state + "/ids.db"
            let first = try ServerProcess(arguments: ["--spool", spool], pulseServer: sound.address)
            #expect(try first.exchange("一号\n二号\n") == ["OK 1", "OK 2"])
            #expect(first.waitForLog("spoke #2"))
            #expect(first.stop() == 0)
            let second = try ServerProcess(arguments: ["--spool", spool], pulseServer: sound.address)
            #expect(try second.exchange("三号\n") == ["OK 3"])
            #expect(second.waitForLog("spoke #3"))
            #expect(!second.log.contains("restored"), "the spool was empty")
            #expect(second.stop(signal: SIGKILL) == 128 + SIGKILL)
            let third = try ServerProcess(arguments: ["--spool", spool], pulseServer: sound.address)
            #expect(try third.exchange("四号\n") == ["OK 4"])
            #expect(third.stop() == 0)
        }

        @Test func spoolFilesAreReadableByTheOwnerOnly() throws {
            let pulse = try silentPulse()
            let spool = state + "/modes.db"
            let files = [spool, spool + "-wal", spool + "-shm", spool + "-hwm"]
            let first = try ServerProcess(arguments: ["--spool", spool], pulseServer: pulse.address)
            #expect(try first.exchange("好\n") == ["OK 1"])
            for file in files { #expect(mode(of: file) == 0o600, "\(file): \(String(mode(of: file) ?? 0, radix: 8))") }
            #expect(first.stop(signal: SIGKILL) == 128 + SIGKILL)
            // Files left readable by an older version are closed up at start.
            for file in files { #expect(chmod(file, 0o644) == 0) }
            let second = try ServerProcess(arguments: ["--spool", spool], pulseServer: pulse.address)
            #expect(second.waitForLog("restored 1 announcement(s)"))
            #expect(try second.exchange("好\n") == ["OK 2"])
            for file in files { #expect(mode(of: file) == 0o600, "\(file): \(String(mode(of: file) ?? 0, radix: 8))") }
            #expect(second.stop() == 0)
        }

        @Test func aWallClockJumpAcrossARestartExpiresNothing() throws {
            let pulse = try silentPulse()
            let spool = state + "/clock.db"
            try acceptWithoutSoundThenKill(["一号", "二号"], spool: spool, arguments: ["--ttl", "300"], pulse: pulse)
            try pulse.start()
            // The wall clock a day ahead, the boot clock as it is: a clock set by NTP, not time passing.
            let later = try ServerProcess(
                arguments: ["--spool", spool, "--ttl", "300"], pulseServer: pulse.address,
                environment: try WallClockShift.environment(seconds: 86_400))
            #expect(later.waitForLog("restored 2 announcement(s)"))
            #expect(later.waitForLog("spoke #2", timeout: 30))
            #expect(later.log.contains("spoke #1"))
            #expect(!later.log.contains("expired"), "\(later.log)")
            // The log's wall clock really is a day ahead.
            let tomorrow = WallClock.iso8601(milliseconds: WallClock.nowMilliseconds() + 86_400_000).prefix(10)
            #expect(later.log.contains(String(tomorrow)), "\(later.log)")
            #expect(later.stop() == 0)
        }

        @Test func restoredAnnouncementsKeepAgingOnTheBootClockAcrossARestart() throws {
            let pulse = try silentPulse()
            let spool = state + "/aging.db"
            try acceptWithoutSoundThenKill(["一号"], spool: spool, arguments: ["--ttl", "1"], pulse: pulse)
            // The behaviour under test is an age: let the stored announcement grow older than its TTL.
            Thread.sleep(forTimeInterval: 1.5)
            try pulse.start()
            // A longer --ttl now does not give it back its time: what was left at the save, minus the boot
            // clock since, is what it has.
            let second = try ServerProcess(arguments: ["--spool", spool, "--ttl", "300"], pulseServer: pulse.address)
            #expect(second.waitForLog("restored 1 announcement(s)"))
            #expect(second.waitForLog("expired #1 "))
            #expect(try second.exchange("二号\n") == ["OK 2"])
            #expect(second.waitForLog("spoke #2"))
            #expect(!second.log.contains("spoke #1"))
            #expect(second.stop() == 0)
        }

        @Test func groupCommitAcknowledgesManyLinesPerFsyncOnASlowDisk() throws {
            let pulse = try silentPulse()
            let spool = state + "/slow.db"
            let counted = state + "/fsync-count"
            let fsyncMilliseconds = 200
            let bobao = try ServerProcess(
                arguments: ["--spool", spool], pulseServer: pulse.address,
                environment: try SlowFsync.environment(milliseconds: fsyncMilliseconds, countFile: counted))
            let before = SlowFsync.calls(countedIn: counted)
            #expect(before > 0, "the slow fsync is in effect")
            let lines = (1...20).map { "\($0)号请取餐\n" }.joined()
            let started = Date()
            let replies = try bobao.exchange(lines)
            let elapsed = Date().timeIntervalSince(started)
            let fsyncs = SlowFsync.calls(countedIn: counted) - before
            print("slow fsync: 20 lines acknowledged in \(Int(elapsed * 1000)) ms with \(fsyncs) fsyncs of \(fsyncMilliseconds) ms")
            #expect(replies == (1...20).map { "OK \($0)" })
            #expect(elapsed >= Double(fsyncMilliseconds) / 1000, "each OK waited for a real (slow) fsync")
            #expect(elapsed < 20 * Double(fsyncMilliseconds) / 1000 / 4, "far fewer than 20 fsync times")
            #expect(fsyncs < 20)
            #expect(bobao.stop(signal: SIGKILL) == 128 + SIGKILL)
        }

        @Test func aSlowFsyncDoesNotDelayAnotherClient() throws {
            let pulse = try silentPulse()
            let counted = state + "/fsync-count-2"
            let fsyncMilliseconds = 200
            let bobao = try ServerProcess(
                arguments: ["--spool", state + "/slow-2.db", "--queue", "1000"], pulseServer: pulse.address,
                environment: try SlowFsync.environment(milliseconds: fsyncMilliseconds, countFile: counted))
            // One client keeps the spool busy: 20 lines, then 20 more as soon as they are answered.
            let busy = try LineClient(connectingTo: ListenAddress(host: "127.0.0.1", port: bobao.port))
            try busy.send((1...20).map { "\($0)号\n" }.joined())
            // Meanwhile another client's line is answered within a few commits, not after the busy one's 20…
            let other = try LineClient(connectingTo: ListenAddress(host: "127.0.0.1", port: bobao.port))
            let started = Date()
            try other.send("欢迎光临\n")
            #expect(other.readLine()?.hasPrefix("OK ") == true)
            let otherLatency = Date().timeIntervalSince(started)
            // …and a line that needs no disk (refused) is answered at once: the event loop never waits for fsync.
            let refusedAt = Date()
            try other.send("a\u{1}b\n")
            #expect(other.readLine()?.hasPrefix("ERR bad-text") == true)
            let refusalLatency = Date().timeIntervalSince(refusedAt)
            for _ in 1...20 { #expect(busy.readLine()?.hasPrefix("OK ") == true) }
            print("slow fsync (\(fsyncMilliseconds) ms): another client's OK after \(Int(otherLatency * 1000)) ms, "
                + "a refusal after \(Int(refusalLatency * 1000)) ms")
            // Two syncs a commit (the WAL, then the high-water mark): at worst it waits out the commit in
            // progress and then its own.
            #expect(otherLatency < 5 * Double(fsyncMilliseconds) / 1000)
            #expect(refusalLatency < 0.1)
            #expect(bobao.stop(signal: SIGKILL) == 128 + SIGKILL)
        }
    }
}

private func mode(of path: String) -> Int? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return Int(info.st_mode & 0o777)
}

/// Runs `sql` on the database at `path`, as someone tampering with the file would.
private func sqlite(_ path: String, _ sql: String) throws {
    var handle: OpaquePointer?
    guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle else {
        sqlite3_close(handle)
        throw ProgramError.notFound("sqlite database \(path)")
    }
    defer { sqlite3_close(handle) }
    var message: UnsafeMutablePointer<CChar>?
    guard sqlite3_exec(handle, sql, nil, nil, &message) == SQLITE_OK else {
        let text = message.map { String(cString: $0) } ?? ""
        sqlite3_free(message)
        Issue.record("\(sql): \(text)")
        return
    }
}
