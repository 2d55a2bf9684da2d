import BobaoCore
import CSQLite

/// The per-message options a row keeps beside its text (priority, repeat, chime, voice, rate, pitch,
/// volume, client key, max_speech), written and read back checked: a value no client could have sent is
/// damage, reported as such.
extension AnnouncementSpool {
    /// Columns added to `announcements` for the options, with their types (NULL is the server's default).
    static let optionColumns = [
        "priority TEXT", "repeat_count INTEGER", "chime TEXT", "voice TEXT", "rate INTEGER", "pitch INTEGER",
        "volume INTEGER", "client_id TEXT", "max_speech_ms INTEGER", "ttl_ms INTEGER",
    ]

    static var optionColumnNames: String { optionColumns.map { String($0.prefix { $0 != " " }) }.joined(separator: ", ") }

    /// Binds the options at `first` and the following nine parameters of `statement`.
    func bind(_ options: MessageOptions, to statement: OpaquePointer, at first: Int32) {
        func text(_ index: Int32, _ value: String?) {
            if let value { sqlite3_bind_text(statement, first + index, value, -1, transient) }
        }
        func integer(_ index: Int32, _ value: Int?) {
            if let value { sqlite3_bind_int64(statement, first + index, Int64(value)) }
        }
        text(0, options.priority.rawValue)
        integer(1, options.repeatCount)
        switch options.chime {
        case .serverDefault: break
        case .off: text(2, "off")
        case .on: text(2, "on")
        case .named(let name): text(2, "name:" + name)
        }
        text(3, options.voice)
        integer(4, options.rate)
        integer(5, options.pitch)
        integer(6, options.volume)
        text(7, options.clientID)
        // Whole milliseconds, never 0 (which no client can send, so it would read back as damage).
        integer(8, options.maximumSpeechSeconds.map { max(1, Int(Self.milliseconds($0))) })
        integer(9, options.ttlSeconds.map { max(1, Int(Self.milliseconds($0))) })
    }

    /// Reads the options from column `first` on; throws `damaged(what)` for a value out of its range.
    func readOptions(
        _ query: OpaquePointer, from first: Int32, damaged: (String) -> Failure
    ) throws(Failure) -> MessageOptions {
        func text(_ index: Int32, _ name: String) throws(Failure) -> String? {
            switch sqlite3_column_type(query, first + index) {
            case SQLITE_NULL: return nil
            case SQLITE_TEXT:
                let length = Int(sqlite3_column_bytes(query, first + index))
                guard length <= 256, let raw = sqlite3_column_text(query, first + index),
                      let value = String(validating: UnsafeBufferPointer(start: raw, count: length), as: UTF8.self),
                      !value.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
                    throw damaged("\(name) is not valid text")
                }
                return value
            default: throw damaged("\(name) is not text")
            }
        }
        func integer(_ index: Int32, _ name: String, _ range: ClosedRange<Int>) throws(Failure) -> Int? {
            switch sqlite3_column_type(query, first + index) {
            case SQLITE_NULL: return nil
            case SQLITE_INTEGER:
                let value = sqlite3_column_int64(query, first + index)
                guard value >= Int64(range.lowerBound), value <= Int64(range.upperBound) else {
                    throw damaged("\(name) \(value) is out of range")
                }
                return Int(value)
            default: throw damaged("\(name) is not an integer")
            }
        }
        var options = MessageOptions()
        if let priority = try text(0, "priority") {
            guard let value = Priority(rawValue: priority) else { throw damaged("priority \(priority) is unknown") }
            options.priority = value
        }
        options.repeatCount = try integer(1, "repeat_count", MessageOptions.repeatRange) ?? 1
        switch try text(2, "chime") {
        case nil: options.chime = .serverDefault
        case "off": options.chime = .off
        case "on": options.chime = .on
        case let value? where value.hasPrefix("name:") && value.count > 5: options.chime = .named(String(value.dropFirst(5)))
        case let value?: throw damaged("chime \(value) is unknown")
        }
        options.voice = try text(3, "voice")
        options.rate = try integer(4, "rate", SpeechParameters.rateRange)
        options.pitch = try integer(5, "pitch", SpeechParameters.pitchRange)
        options.volume = try integer(6, "volume", MessageOptions.messageVolumeRange)
        options.clientID = try text(7, "client_id")
        options.maximumSpeechSeconds = try integer(8, "max_speech_ms", 1...3_600_000).map { Double($0) / 1000 }
        options.ttlSeconds = try integer(9, "ttl_ms", 1...2_592_000_000).map { Double($0) / 1000 }
        return options
    }
}
