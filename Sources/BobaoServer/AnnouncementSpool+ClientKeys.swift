import BobaoCore
import BobaoPlatform
import CSQLite

/// The client keys of the last 10 minutes (table `client_ids`), so a client retrying after a restart still
/// gets `OK <n> duplicate`: written in the same transaction as their announcement, their outcome recorded
/// with its removal. Ages are measured on the wall clock (the only clock that spans a restart); a key
/// "accepted" in the future (the clock went back) counts as just accepted.
extension AnnouncementSpool {
    public struct RememberedKey: Sendable, Equatable {
        public var key: String
        public var number: UInt64
        /// Seconds since it was accepted.
        public var age: Double
        public var outcome: AnnouncementEvent?
    }

    func createClientKeyTable() throws(Failure) {
        try execute("""
            CREATE TABLE IF NOT EXISTS client_ids (
                id TEXT PRIMARY KEY, number INTEGER NOT NULL, accepted_ms INTEGER NOT NULL, outcome TEXT)
            """)
    }

    /// Keys younger than `windowSeconds`, oldest first; older ones are deleted.
    public func clientKeys(windowSeconds: Double) throws(Failure) -> [RememberedKey] {
        let now = WallClock.nowMilliseconds()
        let cutoff = now - Self.milliseconds(windowSeconds)
        try execute("DELETE FROM client_ids WHERE accepted_ms <= \(cutoff)")
        let query = try prepare("SELECT id, number, accepted_ms, outcome FROM client_ids ORDER BY accepted_ms")
        defer { sqlite3_finalize(query) }
        var keys: [RememberedKey] = []
        while true {
            let status = sqlite3_step(query)
            if status == SQLITE_DONE { return keys }
            guard status == SQLITE_ROW else { throw failure("read the client keys") }
            // A damaged key row costs at most a repeated announcement: skipped, never fatal.
            guard sqlite3_column_type(query, 0) == SQLITE_TEXT, sqlite3_column_type(query, 1) == SQLITE_INTEGER,
                  let raw = sqlite3_column_text(query, 0),
                  let key = String(validating: UnsafeBufferPointer(start: raw, count: Int(sqlite3_column_bytes(query, 0))),
                                   as: UTF8.self),
                  sqlite3_column_int64(query, 1) > 0 else { continue }
            let accepted = sqlite3_column_int64(query, 2)
            var outcome: AnnouncementEvent? = nil
            if sqlite3_column_type(query, 3) == SQLITE_TEXT, let text = sqlite3_column_text(query, 3) {
                outcome = Self.outcome(named: String(cString: text))
            }
            keys.append(RememberedKey(
                key: key, number: UInt64(sqlite3_column_int64(query, 1)),
                age: max(0, Double(now - accepted) / 1000), outcome: outcome))
        }
    }

    /// The outcome a stored name stands for (reasons are not kept).
    static func outcome(named name: String) -> AnnouncementEvent? {
        switch name {
        case "done": .done
        case "expired": .expired
        case "cut": .cut
        case "cancelled": .cancelled(reason: "cancelled before a restart")
        case "failed": .failed(reason: "failed before a restart")
        default: nil
        }
    }

    func rememberKey(_ announcement: Announcement) throws(Failure) {
        guard let key = announcement.options.clientID, let rememberKey else { return }
        sqlite3_reset(rememberKey)
        sqlite3_clear_bindings(rememberKey)
        sqlite3_bind_text(rememberKey, 1, key, -1, transient)
        sqlite3_bind_int64(rememberKey, 2, Int64(announcement.id))
        sqlite3_bind_int64(rememberKey, 3, announcement.acceptedAt)
        guard sqlite3_step(rememberKey) == SQLITE_DONE else { throw failure("remember the client key of #\(announcement.id)") }
    }

    func settleKey(_ key: String, number: UInt64, outcome: String) throws(Failure) {
        guard let settleKey else { return }
        sqlite3_reset(settleKey)
        sqlite3_clear_bindings(settleKey)
        sqlite3_bind_text(settleKey, 1, outcome, -1, transient)
        sqlite3_bind_text(settleKey, 2, key, -1, transient)
        sqlite3_bind_int64(settleKey, 3, Int64(exactly: number) ?? 0)
        guard sqlite3_step(settleKey) == SQLITE_DONE else { throw failure("record the outcome of #\(number)") }
    }
}
