import BobaoCore
import CSQLite
import Glibc

/// Accepted announcements on disk, in SQLite (WAL mode, synchronous commits): written before `OK` is
/// sent, removed once spoken or expired, read back in order at start-up. An unreadable or corrupt spool is
/// an error, never a silent reset.
///
/// Not thread-safe by itself; `AnnouncementBoard` calls it under its lock.
public final class AnnouncementSpool: @unchecked Sendable {
    public let path: String
    private let database: OpaquePointer
    private let insert: OpaquePointer
    private let delete: OpaquePointer
    /// Held for the spool's life: one server per spool, or both would replay and renumber the same rows.
    private let lockDescriptor: Int32

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Opens (or creates) the spool at `path`, checking that it is a sound Bobao spool.
    public init(path: String) throws(Failure) {
        self.path = path
        let lock = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else {
            throw Failure(description: "cannot open the spool lock \(path).lock: \(String(cString: strerror(errno)))")
        }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            close(lock)
            throw Failure(description: "the spool \(path) is in use by another bobao serve; give each server its own --spool")
        }
        lockDescriptor = lock
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            close(lock)
            throw Failure(description: "cannot open the spool \(path): \(message)")
        }
        database = handle
        sqlite3_busy_timeout(handle, 2000)
        do throws(Failure) {
            try Self.execute(handle, path, "PRAGMA journal_mode=WAL")
            try Self.execute(handle, path, "PRAGMA synchronous=FULL")
            let check = try Self.single(handle, path, "PRAGMA quick_check")
            guard check == "ok" else { throw Failure(description: "the spool \(path) is corrupt: \(check)") }
            try Self.execute(handle, path, """
                CREATE TABLE IF NOT EXISTS announcements (
                    id INTEGER PRIMARY KEY, text TEXT NOT NULL, accepted_at INTEGER NOT NULL)
                """)
            insert = try Self.prepare(handle, path, "INSERT INTO announcements (id, text, accepted_at) VALUES (?, ?, ?)")
            delete = try Self.prepare(handle, path, "DELETE FROM announcements WHERE id = ?")
        } catch {
            sqlite3_close(handle)
            close(lock)
            throw error
        }
    }

    deinit {
        sqlite3_finalize(insert)
        sqlite3_finalize(delete)
        sqlite3_close(database)
        close(lockDescriptor)
    }

    /// Stores an announcement; returns once it is on disk.
    public func store(_ announcement: Announcement) throws(Failure) {
        sqlite3_reset(insert)
        sqlite3_bind_int64(insert, 1, Int64(announcement.id))
        sqlite3_bind_text(insert, 2, announcement.text, -1, transient)
        sqlite3_bind_int64(insert, 3, announcement.acceptedAt)
        guard sqlite3_step(insert) == SQLITE_DONE else { throw failure("store #\(announcement.id)") }
    }

    /// Removes a spoken or expired announcement.
    public func remove(id: UInt64) throws(Failure) {
        sqlite3_reset(delete)
        sqlite3_bind_int64(delete, 1, Int64(id))
        guard sqlite3_step(delete) == SQLITE_DONE else { throw failure("remove #\(id)") }
    }

    /// Everything stored, oldest first.
    public func all() throws(Failure) -> [Announcement] {
        let query = try Self.prepare(database, path, "SELECT id, text, accepted_at FROM announcements ORDER BY id")
        defer { sqlite3_finalize(query) }
        var result: [Announcement] = []
        while true {
            let status = sqlite3_step(query)
            if status == SQLITE_DONE { return result }
            guard status == SQLITE_ROW else { throw failure("read") }
            let text = sqlite3_column_text(query, 1).map { String(cString: $0) } ?? ""
            result.append(Announcement(
                id: UInt64(sqlite3_column_int64(query, 0)), text: text, acceptedAt: sqlite3_column_int64(query, 2)))
        }
    }

    private func failure(_ what: String) -> Failure {
        Failure(description: "spool \(path): cannot \(what): \(String(cString: sqlite3_errmsg(database)))")
    }

    // MARK: SQLite helpers

    /// SQLITE_TRANSIENT: SQLite copies the bound text. (The C macro is a cast Swift cannot import.)
    private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static func execute(_ database: OpaquePointer, _ path: String, _ sql: String) throws(Failure) {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(database, sql, nil, nil, &message) == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(database))
            sqlite3_free(message)
            throw Failure(description: "the spool \(path) is unreadable or not a spool: \(text)")
        }
    }

    private static func single(_ database: OpaquePointer, _ path: String, _ sql: String) throws(Failure) -> String {
        let statement = try prepare(database, path, sql)
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else {
            throw Failure(description: "the spool \(path) is unreadable: \(String(cString: sqlite3_errmsg(database)))")
        }
        return sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? ""
    }

    private static func prepare(_ database: OpaquePointer, _ path: String, _ sql: String) throws(Failure) -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw Failure(description: "the spool \(path) is unreadable or not a spool: \(String(cString: sqlite3_errmsg(database)))")
        }
        return statement
    }
}
