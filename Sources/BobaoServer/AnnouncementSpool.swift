import BobaoCore
import BobaoPlatform
import CSQLite
import Glibc
import Synchronization

/// Accepted announcements on disk, in SQLite (WAL mode, synchronous commits): written before `OK` is
/// sent, removed once spoken or expired, read back in order at start-up. An unreadable, corrupt or
/// tampered spool is a start-up error, never a silent reset.
///
/// Files: `PATH` (the database), `PATH-wal` and `PATH-shm` (SQLite's), and `PATH-hwm`, the high-water
/// mark: the highest id ever acknowledged, rewritten and fsynced after every commit. It lives outside
/// the WAL's reach, so frames SQLite drops silently (a bad checksum ends WAL recovery) are noticed at
/// start: the database's own `last_id` is then below the mark. All four are mode 0600.
///
/// The lock is `flock` on the database file itself, so a second server reaching the same file through
/// a hard link or a symlink is refused too. Every commit checks that `PATH` still names the file that was
/// opened, so nothing is acknowledged into a deleted or renamed spool.
///
/// Time to live across a restart: each row keeps the TTL it had left when it was saved, the boot id
/// (`/proc/sys/kernel/random/boot_id`) and the boot clock (`CLOCK_BOOTTIME`) at that moment. On restore
/// in the same boot, what is left is the stored remainder minus the boot-clock time since the save (exact
/// across `kill -9`, and blind to wall-clock jumps). After a reboot the stored remainder is kept whole:
/// the downtime cannot be measured on a box without a battery clock. Either way it is capped at the
/// current `--ttl`. The wall clock (`accepted_at`) is for logs only.
///
/// Not thread-safe by itself: the board's `SpoolWriter` thread makes every write after start-up.
public final class AnnouncementSpool: @unchecked Sendable {
    public let path: String
    /// The high-water mark file, `PATH-hwm`.
    public let counterPath: String
    /// The highest id ever acknowledged (in this spool's whole life, spoken or not).
    public private(set) var lastID: UInt64
    var database: OpaquePointer?
    var insert: OpaquePointer?
    var delete: OpaquePointer?
    var updateLastID: OpaquePointer?
    var rememberKey: OpaquePointer?
    var settleKey: OpaquePointer?
    /// The database file itself: its `flock` is the one-server lock, its inode is what every commit
    /// checks. Kept open until after `sqlite3_close` (closing any descriptor of the file would drop
    /// SQLite's POSIX locks).
    var fileDescriptor: Int32
    var counterDescriptor: Int32
    /// The write-ahead log's device and inode, learnt at the first commit: SQLite keeps the file for as long
    /// as the database is open (a checkpoint truncates it, never removes it), so another inode, or none,
    /// means somebody deleted or replaced it, and commits would go where nothing reads them back.
    var writeAheadLog: (device: UInt64, inode: UInt64)?
    let committed = Atomic<Int>(0)

    /// The longest text a row may hold, in bytes.
    public static let maximumTextBytes = 1 << 20
    /// The latest accepted_at believed (9999-12-31), in ms since 1970.
    static let latestMilliseconds: Int64 = 253_402_300_799_999
    /// The longest stored remainder or boot-clock reading believed: 100 years, in ms.
    static let longestMilliseconds: Int64 = 3_155_760_000_000

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// How many transactions have been committed since opening (group commit puts many announcements in one).
    public var commitCount: Int { committed.load(ordering: .relaxed) }

    /// Every file of the spool, to name in advice.
    public var files: [String] { [path, path + "-wal", path + "-shm", counterPath] }

    var advice: String {
        "to start afresh, move these files aside: \(files.joined(separator: ", ")); or run with --no-spool"
    }

    /// Opens (or creates) the spool at `path`, checking that it is a sound Bobao spool.
    public init(path: String) throws(Failure) {
        self.path = path
        counterPath = path + "-hwm"
        lastID = 0
        counterDescriptor = -1
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot open the spool \(path): \(Self.errorText())") }
        fileDescriptor = fd
        do throws(Failure) {
            try openChecked()
        } catch {
            abandon()
            throw error
        }
    }

    func openChecked() throws(Failure) {
        var own = stat()
        guard fstat(fileDescriptor, &own) == 0 else { throw Failure(description: "cannot stat the spool \(path): \(Self.errorText())") }
        guard (own.st_mode & S_IFMT) == S_IFREG else { throw Failure(description: "the spool \(path) is not a regular file") }
        guard flock(fileDescriptor, LOCK_EX | LOCK_NB) == 0 else {
            throw Failure(description: "the spool \(path) is in use by another bobao serve; give each server its own --spool")
        }
        // SQLite gives -wal and -shm the database's mode.
        fchmod(fileDescriptor, 0o600)
        for companion in [path + "-wal", path + "-shm"] { chmod(companion, 0o600) }
        let walBytes: Int = { var wal = stat(); return stat(path + "-wal", &wal) == 0 ? Int(wal.st_size) : 0 }()
        let brandNew = own.st_size == 0 && walBytes == 0

        // The high-water mark.
        var counter: UInt64? = nil
        let existing = open(counterPath, O_RDWR | O_CLOEXEC)
        if existing >= 0 {
            counterDescriptor = existing
            fchmod(existing, 0o600)
            counter = try readCounter()
        } else if errno != ENOENT {
            throw Failure(description: "cannot open the spool's counter \(counterPath): \(Self.errorText())")
        }
        if brandNew {
            if let counter, counter > 0 {
                throw Failure(description: "the spool \(path) is empty but its counter \(counterPath) says announcements up to "
                    + "#\(counter) were acknowledged: the database was lost; \(advice)")
            }
            // The counter exists before the database holds a spool, so a spool without one is damage.
            if counter == nil {
                try createCounter(0)
                counter = 0
            }
        }

        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            // Closing a connection that never opened checkpoints nothing.
            sqlite3_close(handle)
            throw Failure(description: "cannot open the spool \(path): \(message)")
        }
        database = handle
        sqlite3_busy_timeout(handle, 2000)
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=FULL")
        let check = try single("PRAGMA quick_check")
        guard check == "ok" else { throw Failure(description: "the spool \(path) is corrupt: \(check); \(advice)") }
        let hadMeta = try tableExists("meta")
        try execute("BEGIN IMMEDIATE")
        do throws(Failure) {
            try execute("""
                CREATE TABLE IF NOT EXISTS announcements (
                    id INTEGER PRIMARY KEY, text TEXT NOT NULL, accepted_at INTEGER NOT NULL)
                """)
            for column in ["remaining_ms INTEGER", "boot_id TEXT", "saved_boot_ms INTEGER"] + Self.optionColumns {
                let name = String(column.prefix { $0 != " " })
                if try !columnExists(name, in: "announcements") {
                    try execute("ALTER TABLE announcements ADD COLUMN \(column)")
                }
            }
            try execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)")
            try execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('last_id', 0)")
            try createClientKeyTable()
            try createSettingsTable()
            try execute("COMMIT")
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
        let storedLast = try readLastID()
        let rows = try readRows()
        let databaseLast = max(storedLast, rows.last?.id ?? 0)
        if let counter {
            guard counter <= databaseLast else {
                throw Failure(description: "the spool \(path) ends at #\(databaseLast) but its counter \(counterPath) says "
                    + "#\(counter) was acknowledged: committed announcements were lost (the database or its -wal file was damaged, deleted or replaced); \(advice)")
            }
        } else if hadMeta {
            throw Failure(description: "the spool's counter \(counterPath) is missing while \(path) holds a spool, so lost "
                + "announcements could not be noticed; \(advice)")
        } else {
            // A spool from before the counter existed: start counting from what it holds.
            try createCounter(databaseLast)
        }
        lastID = max(databaseLast, counter ?? 0)
        // A counter that moves by one an announcement cannot get near this (2^53, also the largest id a JSON
        // client can hold exactly): only tampering can, and it would leave no ids to give.
        guard lastID < Self.largestID else {
            throw Failure(description: "the spool \(path) says #\(lastID) was the last id given, which leaves no ids "
                + "(Bobao gives ids below \(Self.largestID)): it is damaged or was tampered with; \(advice)")
        }
        insert = try prepare("""
            INSERT INTO announcements (id, text, accepted_at, remaining_ms, boot_id, saved_boot_ms, \(Self.optionColumnNames))
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        rememberKey = try prepare("INSERT OR REPLACE INTO client_ids (id, number, accepted_ms, outcome) VALUES (?, ?, ?, NULL)")
        settleKey = try prepare("UPDATE client_ids SET outcome = ? WHERE id = ? AND number = ?")
        delete = try prepare("DELETE FROM announcements WHERE id = ?")
        updateLastID = try prepare("UPDATE meta SET value = max(value, ?) WHERE key = 'last_id'")
    }

    /// Ids are below this (2^53, the largest integer a JSON client holds exactly).
    public static let largestID: UInt64 = 1 << 53

    deinit { close() }

    /// Closes the database and its files (the lock goes with them). Idempotent; the spool is unusable after.
    public func close() {
        finalizeStatements()
        if let database { sqlite3_close(database) }
        database = nil
        closeDescriptors()
    }

    /// Gives up after a failed start without closing SQLite's connection: closing would checkpoint and
    /// delete the -wal file, which must stay as it was for whoever looks at the damage.
    func abandon() {
        if database != nil {
            finalizeStatements()
            database = nil  // leaked on purpose
            // The descriptor stays open too, since closing it would drop the leaked connection's POSIX
            // locks; only the one-server lock is released.
            flock(fileDescriptor, LOCK_UN)
            return
        }
        closeDescriptors()
    }

    func finalizeStatements() {
        for statement in [insert, delete, updateLastID, rememberKey, settleKey] { sqlite3_finalize(statement) }
        insert = nil
        delete = nil
        updateLastID = nil
        rememberKey = nil
        settleKey = nil
    }

    func closeDescriptors() {
        if fileDescriptor >= 0 { Glibc.close(fileDescriptor) }
        if counterDescriptor >= 0 { Glibc.close(counterDescriptor) }
        fileDescriptor = -1
        counterDescriptor = -1
    }

    // MARK: Writing

    /// Stores an announcement; returns once it is on disk.
    public func store(_ announcement: Announcement) throws(Failure) {
        _ = try commit(storing: [announcement], removing: [])
    }

    /// Stores and removes in one transaction (one fsync of the WAL), recording the outcomes of the removed
    /// ones that had client keys (`settling`), then raises the high-water mark (one more fsync) before
    /// returning. Throws, having changed nothing, if `path` no longer names the
    /// file that was opened. Returns a warning when the database committed but the mark could not be
    /// written: the announcements are on disk, only the loss check is weaker.
    public func commit(
        storing announcements: [Announcement], removing ids: [UInt64],
        settling keys: [(key: String, number: UInt64, outcome: String)] = []
    ) throws(Failure) -> String? {
        guard let database, let insert, let delete, let updateLastID else {
            throw Failure(description: "the spool \(path) is closed")
        }
        try checkStillTheSameFile()
        let now = WallClock.bootSeconds()
        let bootID = Self.bootID
        try execute("BEGIN IMMEDIATE")
        var highest: UInt64 = 0
        do throws(Failure) {
            for announcement in announcements {
                guard let id = Int64(exactly: announcement.id), id >= 1, id < Int64.max else {
                    throw Failure(description: "spool \(path): cannot store #\(announcement.id): the id is out of range")
                }
                let utf8 = Array(announcement.text.utf8)
                guard !utf8.isEmpty, utf8.count <= Self.maximumTextBytes else {
                    throw Failure(description: "spool \(path): cannot store #\(announcement.id): \(utf8.count) bytes of text")
                }
                sqlite3_reset(insert)
                sqlite3_clear_bindings(insert)
                sqlite3_bind_int64(insert, 1, id)
                utf8.withUnsafeBufferPointer { bytes in
                    _ = bytes.withMemoryRebound(to: CChar.self) {
                        sqlite3_bind_text(insert, 2, $0.baseAddress, Int32(utf8.count), transient)
                    }
                }
                sqlite3_bind_int64(insert, 3, announcement.acceptedAt)
                if announcement.expiresAt.isFinite {
                    sqlite3_bind_int64(insert, 4, Self.milliseconds(announcement.expiresAt - now))
                }
                sqlite3_bind_text(insert, 5, bootID, -1, transient)
                sqlite3_bind_int64(insert, 6, Self.milliseconds(now))
                bind(announcement.options, to: insert, at: 7)
                guard sqlite3_step(insert) == SQLITE_DONE else { throw failure("store #\(announcement.id)") }
                try rememberKey(announcement)
                highest = max(highest, announcement.id)
            }
            for id in ids {
                guard let key = Int64(exactly: id) else { continue }  // never stored
                sqlite3_reset(delete)
                sqlite3_bind_int64(delete, 1, key)
                guard sqlite3_step(delete) == SQLITE_DONE else { throw failure("remove #\(id)") }
            }
            for settled in keys { try settleKey(settled.key, number: settled.number, outcome: settled.outcome) }
            if highest > 0 {
                sqlite3_reset(updateLastID)
                sqlite3_bind_int64(updateLastID, 1, Int64(exactly: highest) ?? 0)
                guard sqlite3_step(updateLastID) == SQLITE_DONE else { throw failure("record the last id") }
            }
            guard sqlite3_exec(database, "COMMIT", nil, nil, nil) == SQLITE_OK else { throw failure("commit") }
        } catch {
            sqlite3_exec(database, "ROLLBACK", nil, nil, nil)
            throw error
        }
        committed.add(1, ordering: .relaxed)
        guard highest > lastID else { return nil }
        lastID = highest
        return writeCounter(highest)
    }

    /// Copies the WAL into the database and truncates it (`PRAGMA wal_checkpoint(TRUNCATE)`).
    public func checkpoint() throws(Failure) {
        guard database != nil else { return }
        try execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    // MARK: Time

    /// This boot's id, from `/proc/sys/kernel/random/boot_id` ("" if unreadable: then nothing counts as the same boot).
    static let bootID: String = {
        guard let bytes = try? FileSystem.read("/proc/sys/kernel/random/boot_id") else { return "" }
        return String(decoding: bytes.prefix(64), as: UTF8.self).trimmingWhitespace()
    }()

    /// Seconds as whole milliseconds, clamped to 0…100 years (never a trapping conversion).
    static func milliseconds(_ seconds: Double) -> Int64 {
        guard seconds.isFinite else { return seconds > 0 ? longestMilliseconds : 0 }
        let value = (seconds * 1000).rounded()
        if value <= 0 { return 0 }
        if value >= Double(longestMilliseconds) { return longestMilliseconds }
        return Int64(value)
    }

}
