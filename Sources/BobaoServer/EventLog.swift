import BobaoPlatform
import Glibc

/// One line per event on standard error: `2026-11-29T19:22:09.123Z bobao: message`.
public struct EventLog: Sendable {
    private let write: @Sendable (String) -> Void

    public init(write: @escaping @Sendable (String) -> Void = EventLog.standardError) {
        self.write = write
    }

    public func callAsFunction(_ message: String) {
        write("\(WallClock.iso8601()) bobao: \(message)\n")
    }

    public static let standardError: @Sendable (String) -> Void = { line in
        StandardStreams.writeError(line)
    }

    /// Quotes announcement text for a log line: at most 60 characters, control characters escaped.
    public static func quote(_ text: String) -> String {
        let short = text.count > 60 ? String(text.prefix(60)) + "…" : text
        return "\"" + short.unicodeScalars.map { $0.value < 0x20 || $0 == "\"" ? $0.escaped(asASCII: true) : String($0) }
            .joined() + "\""
    }
}
