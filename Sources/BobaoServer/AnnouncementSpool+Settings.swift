import BobaoCore
import CSQLite

/// What clients change at run time and the server keeps across restarts (table `settings`: a `key` and an
/// integer `value` a row), such as the stream volume `bobao volume` sets. Each write is a transaction of its
/// own, as synchronous as the announcements' commits, so it survives `kill -9` and a power cut. A stored
/// value no client could have set is damage: a start-up error that says how to remove just that row.
extension AnnouncementSpool {
    /// The stream volume (`{"cmd": "volume", "value": N}`), a whole percent within `ClientCommand.volumeRange`.
    static let streamVolumeKey = "stream_volume"

    func createSettingsTable() throws(Failure) {
        try execute("CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value INTEGER NOT NULL)")
    }

    /// The stream volume a client set, or nil if none ever did.
    public func streamVolume() throws(Failure) -> Int? {
        guard let value = try integerSetting(Self.streamVolumeKey) else { return nil }
        let range = ClientCommand.volumeRange
        guard let percent = Int(exactly: value), range.contains(percent) else {
            throw damagedSetting(Self.streamVolumeKey, "\(value) is not a volume from \(range.lowerBound) to \(range.upperBound)")
        }
        return percent
    }

    /// Stores the stream volume; returns once it is on disk. Throws, having changed nothing, when `percent` is
    /// out of range or `path` no longer names the file that was opened (as a commit does).
    public func storeStreamVolume(_ percent: Int) throws(Failure) {
        guard ClientCommand.volumeRange.contains(percent) else {
            throw Failure(description: "spool \(path): cannot store the stream volume \(percent): out of range")
        }
        try storeSetting(Self.streamVolumeKey, Int64(percent))
    }

    func integerSetting(_ key: String) throws(Failure) -> Int64? {
        let query = try prepare("SELECT value FROM settings WHERE key = ?")
        defer { sqlite3_finalize(query) }
        sqlite3_bind_text(query, 1, key, -1, transient)
        switch sqlite3_step(query) {
        case SQLITE_DONE:
            return nil
        case SQLITE_ROW:
            guard sqlite3_column_type(query, 0) == SQLITE_INTEGER else {
                throw damagedSetting(key, "the value is not an integer")
            }
            return sqlite3_column_int64(query, 0)
        default:
            throw failure("read the setting \(key)")
        }
    }

    func storeSetting(_ key: String, _ value: Int64) throws(Failure) {
        guard database != nil else { throw Failure(description: "the spool \(path) is closed") }
        try checkStillTheSameFile()
        let statement = try prepare("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)")
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_text(statement, 1, key, -1, transient)
        sqlite3_bind_int64(statement, 2, value)
        guard sqlite3_step(statement) == SQLITE_DONE else { throw failure("store the setting \(key)") }
    }

    func damagedSetting(_ key: String, _ what: String) -> Failure {
        Failure(description: "the spool \(path) holds a damaged setting \(key): \(what); remove just that row with "
            + "sqlite3 \(path) \"DELETE FROM settings WHERE key = '\(key)'\" (the announcements stay), or, \(advice)")
    }
}
