import BobaoPlatform
import Glibc

/// One line per event on standard error: `2026-11-29T19:22:09.123Z bobao: message`.
///
/// Text from clients cannot break a line or spoof what a terminal shows: control characters (C0, DEL, C1),
/// line and paragraph separators, and invisible format characters (bidi overrides, isolates and marks,
/// zero-width characters) are written as `\u{202E}`-style escapes, in quoted text and in every message.
public struct EventLog: Sendable {
    private let write: @Sendable (String) -> Void

    public init(write: @escaping @Sendable (String) -> Void = EventLog.standardError) {
        self.write = write
    }

    public func callAsFunction(_ message: String) {
        write("\(WallClock.iso8601()) bobao: \(Self.escaping(message, also: { _ in false }))\n")
    }

    public static let standardError: @Sendable (String) -> Void = { line in
        StandardStreams.writeError(line)
    }

    /// Quotes announcement text for a log line: at most 60 characters; control and invisible characters,
    /// quotes and backslashes escaped, so what is shown is exactly what was sent.
    public static func quote(_ text: String) -> String {
        let short = text.count > 60 ? String(text.prefix(60)) + "…" : text
        return "\"" + escaping(short, also: { $0 == "\"" || $0 == "\\" }) + "\""
    }

    /// Whether a character would break the log line or change how a terminal shows the rest of it.
    public static func isUnsafeInLog(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value >= 0x20 && scalar.value < 0x7F { return false }  // printable ASCII: the usual case
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned:
            return true
        default:
            return false
        }
    }

    private static func escaping(_ text: String, also extra: (Unicode.Scalar) -> Bool) -> String {
        let scalars = text.unicodeScalars
        guard scalars.contains(where: { isUnsafeInLog($0) || extra($0) }) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 16)
        for scalar in scalars {
            if isUnsafeInLog(scalar) || extra(scalar) {
                escaped += scalar.escaped(asASCII: true)
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
