import BobaoCore
import BobaoPlatform
import CSQLite
import Glibc
import Synchronization

/// The spool's files: that they are still the ones opened, the high-water mark beside the database, and
/// the SQLite calls underneath.
extension AnnouncementSpool {
    /// Throws unless `path` still names the open file and the file still has a name.
    public func checkStillTheSameFile() throws(Failure) {
        var own = stat()
        guard fstat(fileDescriptor, &own) == 0 else {
            throw Failure(description: "cannot stat the spool \(path): \(Self.errorText())")
        }
        guard own.st_nlink > 0 else {
            throw Failure(description: "the spool \(path) was deleted while bobao ran; nothing is acknowledged into a "
                + "deleted file (stop bobao, move the spool's other files aside and start it again)")
        }
        var named = stat()
        guard stat(path, &named) == 0 else {
            throw Failure(description: "the spool \(path) was renamed or deleted while bobao ran (\(Self.errorText())); "
                + "nothing is acknowledged into a file that is no longer there")
        }
        guard named.st_dev == own.st_dev, named.st_ino == own.st_ino else {
            throw Failure(description: "the spool \(path) was replaced by another file while bobao ran; nothing is "
                + "acknowledged into the file bobao opened")
        }
        var wal = stat()
        guard stat(path + "-wal", &wal) == 0 else {
            throw Failure(description: "the spool's write-ahead log \(path)-wal was deleted or renamed while bobao ran "
                + "(\(Self.errorText())); nothing is acknowledged into a log that is gone (stop bobao, move the "
                + "spool's other files aside and start it again)")
        }
        if let known = writeAheadLog, known.device != UInt64(wal.st_dev) || known.inode != UInt64(wal.st_ino) {
            throw Failure(description: "the spool's write-ahead log \(path)-wal was replaced while bobao ran; nothing "
                + "is acknowledged into it (stop bobao, move the spool's other files aside and start it again)")
        }
        writeAheadLog = (UInt64(wal.st_dev), UInt64(wal.st_ino))
        var counter = stat()
        guard fstat(counterDescriptor, &counter) == 0, counter.st_nlink > 0 else {
            throw Failure(description: "the spool's counter \(counterPath) was deleted while bobao ran; nothing is "
                + "acknowledged without it (stop bobao, move the spool's other files aside and start it again)")
        }
    }

    // MARK: The high-water mark

    func readCounter() throws(Failure) -> UInt64 {
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { pread(counterDescriptor, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { throw Failure(description: "cannot read the spool's counter \(counterPath): \(Self.errorText())") }
        let digits = bytes[..<count].filter { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: " ") }
        guard !digits.isEmpty, digits.count <= 19, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }),
              let value = Int64(String(decoding: digits, as: UTF8.self)), value < Int64.max else {
            throw Failure(description: "the spool's counter \(counterPath) is damaged; \(advice)")
        }
        return UInt64(value)
    }

    func createCounter(_ value: UInt64) throws(Failure) {
        let fd = open(counterPath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot create the spool's counter \(counterPath): \(Self.errorText())") }
        counterDescriptor = fd
        if let warning = writeCounter(value) { throw Failure(description: warning) }
        // The new name must survive a power cut as surely as the database's.
        let folder = open(FileSystem.parent(of: counterPath), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            Glibc.close(folder)
        }
    }

    /// Overwrites the mark in place (19 digits and a newline at offset 0, within one sector) and fsyncs it.
    func writeCounter(_ value: UInt64) -> String? {
        let text = String(value)
        let line = Array((String(repeating: "0", count: max(0, 19 - text.count)) + text + "\n").utf8)
        let written = line.withUnsafeBytes { pwrite(counterDescriptor, $0.baseAddress, $0.count, 0) }
        guard written == line.count, fdatasync(counterDescriptor) == 0 else {
            return "cannot write the spool's counter \(counterPath): \(Self.errorText())"
        }
        return nil
    }

    // MARK: SQLite helpers

    func failure(_ what: String) -> Failure {
        let message = database.map { String(cString: sqlite3_errmsg($0)) } ?? "closed"
        return Failure(description: "spool \(path): cannot \(what): \(message)")
    }

    static func errorText() -> String { String(cString: strerror(errno)) }

    /// SQLITE_TRANSIENT: SQLite copies the bound text. (The C macro is a cast Swift cannot import.)
    var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

    func execute(_ sql: String) throws(Failure) {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(database, sql, nil, nil, &message) == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? database.map { String(cString: sqlite3_errmsg($0)) } ?? ""
            sqlite3_free(message)
            throw Failure(description: "the spool \(path) is unreadable or not a spool: \(text); \(advice)")
        }
    }

    func single(_ sql: String) throws(Failure) -> String {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw failure("read") }
        return sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? ""
    }

    func tableExists(_ name: String) throws(Failure) -> Bool {
        try single("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '\(name)'") != "0"
    }

    func columnExists(_ column: String, in table: String) throws(Failure) -> Bool {
        try single("SELECT count(*) FROM pragma_table_info('\(table)') WHERE name = '\(column)'") != "0"
    }

    func prepare(_ sql: String) throws(Failure) -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            let message = database.map { String(cString: sqlite3_errmsg($0)) } ?? "closed"
            throw Failure(description: "the spool \(path) is unreadable or not a spool: \(message); \(advice)")
        }
        return statement
    }
}
