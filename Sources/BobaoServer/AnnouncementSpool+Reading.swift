import BobaoCore
import BobaoPlatform
import CSQLite
import Glibc
import Synchronization

/// Reading the spool back at start-up, every value checked.
extension AnnouncementSpool {
    // MARK: Reading

    /// Everything stored, oldest first, each value checked. `expiresAt` is on this boot's clock (see the
    /// type's comment for the rule); rows saved without a remainder get their own ttl, else `ttlSeconds`.
    /// What is left is capped at the message's own ttl if it has one, else at `ttlSeconds` (the current `--ttl`).
    public func all(ttlSeconds: Double = .infinity) throws(Failure) -> [Announcement] {
        let now = WallClock.bootSeconds()
        let bootID = Self.bootID
        return try readRows().map { row in
            var announcement = Announcement(id: row.id, text: row.text, acceptedAt: row.acceptedAt, options: row.options)
            let limit = row.options.ttlSeconds ?? ttlSeconds
            var left = limit
            if let remaining = row.remainingMilliseconds {
                left = Double(remaining) / 1000
                if row.bootID == bootID, let saved = row.savedBootMilliseconds {
                    left -= max(0, now - Double(saved) / 1000)
                }
                left = min(left, limit)
            }
            announcement.expiresAt = now + left
            return announcement
        }
    }

    struct Row {
        var id: UInt64
        var text: String
        var acceptedAt: Int64
        var remainingMilliseconds: Int64?
        var bootID: String?
        var savedBootMilliseconds: Int64?
        var options: MessageOptions
    }

    func readRows() throws(Failure) -> [Row] {
        let query = try prepare("""
            SELECT id, text, accepted_at, remaining_ms, boot_id, saved_boot_ms, \(Self.optionColumnNames)
            FROM announcements ORDER BY id
            """)
        defer { sqlite3_finalize(query) }
        var rows: [Row] = []
        var previous: Int64 = 0
        while true {
            let status = sqlite3_step(query)
            if status == SQLITE_DONE { return rows }
            guard status == SQLITE_ROW else { throw failure("read") }
            let rowNumber = rows.count + 1
            func damaged(_ what: String) -> Failure {
                Failure(description: "the spool \(path) holds a damaged row (row \(rowNumber), after #\(previous)): "
                    + "\(what); \(advice)")
            }
            guard sqlite3_column_type(query, 0) == SQLITE_INTEGER else { throw damaged("the id is not an integer") }
            let id = sqlite3_column_int64(query, 0)
            guard id >= 1, id < Int64.max else { throw damaged("id \(id) is out of range") }
            guard id > previous else { throw damaged("id \(id) is out of order") }
            guard sqlite3_column_type(query, 1) == SQLITE_TEXT else { throw damaged("#\(id) has no text") }
            let count = Int(sqlite3_column_bytes(query, 1))
            guard count > 0, count <= Self.maximumTextBytes else { throw damaged("#\(id) has \(count) bytes of text") }
            guard let bytes = sqlite3_column_text(query, 1) else { throw damaged("#\(id) has no text") }
            let buffer = UnsafeBufferPointer(start: bytes, count: count)
            guard let text = String(validating: buffer, as: UTF8.self) else { throw damaged("#\(id) is not valid UTF-8") }
            guard !text.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }),
                  !text.trimmingWhitespace().isEmpty else {
                throw damaged("#\(id) holds control characters or no text")
            }
            guard sqlite3_column_type(query, 2) == SQLITE_INTEGER else { throw damaged("#\(id) accepted_at is not an integer") }
            let acceptedAt = sqlite3_column_int64(query, 2)
            guard acceptedAt >= 0, acceptedAt <= Self.latestMilliseconds else {
                throw damaged("#\(id) accepted_at \(acceptedAt) is out of range")
            }
            func optionalMilliseconds(_ column: Int32, _ name: String) throws(Failure) -> Int64? {
                switch sqlite3_column_type(query, column) {
                case SQLITE_NULL: return nil
                case SQLITE_INTEGER:
                    let value = sqlite3_column_int64(query, column)
                    guard value >= 0, value <= Self.longestMilliseconds else {
                        throw damaged("#\(id) \(name) \(value) is out of range")
                    }
                    return value
                default: throw damaged("#\(id) \(name) is not an integer")
                }
            }
            let remaining = try optionalMilliseconds(3, "remaining_ms")
            let saved = try optionalMilliseconds(5, "saved_boot_ms")
            var bootID: String? = nil
            switch sqlite3_column_type(query, 4) {
            case SQLITE_NULL: break
            case SQLITE_TEXT:
                let length = Int(sqlite3_column_bytes(query, 4))
                guard length <= 64, let raw = sqlite3_column_text(query, 4),
                      let value = String(validating: UnsafeBufferPointer(start: raw, count: length), as: UTF8.self) else {
                    throw damaged("#\(id) boot_id is not a boot id")
                }
                bootID = value
            default: throw damaged("#\(id) boot_id is not text")
            }
            let options = try readOptions(query, from: 6) { damaged("#\(id) \($0)") }
            rows.append(Row(id: UInt64(id), text: text, acceptedAt: acceptedAt, remainingMilliseconds: remaining,
                            bootID: bootID, savedBootMilliseconds: saved, options: options))
            previous = id
        }
    }

    func readLastID() throws(Failure) -> UInt64 {
        let query = try prepare("SELECT value FROM meta WHERE key = 'last_id'")
        defer { sqlite3_finalize(query) }
        guard sqlite3_step(query) == SQLITE_ROW else { throw failure("read the last id") }
        guard sqlite3_column_type(query, 0) == SQLITE_INTEGER else {
            throw Failure(description: "the spool \(path) holds a damaged last_id (not an integer); \(advice)")
        }
        let value = sqlite3_column_int64(query, 0)
        guard value >= 0, value < Int64.max else {
            throw Failure(description: "the spool \(path) holds a damaged last_id (\(value)); \(advice)")
        }
        return UInt64(value)
    }
}
