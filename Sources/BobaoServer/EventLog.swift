import BobaoCore
import BobaoPlatform
import Glibc

/// One line per event on standard error: `2026-11-30T03:22:09.123+08:00 bobao: message` (local time with
/// its offset), or, when standard error is the journal (`JOURNAL_STREAM` names it, as systemd sets it for a
/// service), `<4>message`: the priority as sd-daemon(3) writes it and no time stamp, which journald adds.
/// A message's priority is its `LogPriority` prefix; on a terminal a warning or error says so in words.
///
/// Text from clients cannot break a line or spoof what a terminal shows: control characters (C0, DEL, C1),
/// line and paragraph separators, and invisible format characters (bidi overrides, isolates and marks,
/// zero-width characters) are written as `\u{202E}`-style escapes, in quoted text and in every message.
public struct EventLog: Sendable {
    private let write: @Sendable (String) -> Void
    private let toJournal: Bool

    /// - Parameter journal: whether lines go to journald; by default, whether standard error is the
    ///   stream `JOURNAL_STREAM` names.
    public init(journal: Bool? = nil, write: @escaping @Sendable (String) -> Void = EventLog.standardError) {
        self.write = write
        toJournal = journal ?? Self.standardErrorIsJournal()
        tzset()
    }

    public func callAsFunction(_ message: String) {
        let (priority, text) = Self.priority(of: message)
        let escaped = Self.escaping(text, also: { _ in false })
        if toJournal {
            write("<\(priority)>\(escaped)\n")
        } else {
            let label = priority <= 3 ? "error: " : priority == 4 ? "warning: " : ""
            write("\(WallClock.localISO8601()) bobao: \(label)\(escaped)\n")
        }
    }

    /// The `<N>` a message starts with (0 to 7), and the rest; 6 (info) when it has none.
    static func priority(of message: String) -> (Int, Substring) {
        let bytes = message.utf8
        guard bytes.count >= 3, bytes.first == UInt8(ascii: "<"),
              let digit = bytes.dropFirst().first, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(digit),
              bytes.dropFirst(2).first == UInt8(ascii: ">") else { return (6, message[...]) }
        return (Int(digit - UInt8(ascii: "0")), message.dropFirst(3))
    }

    /// systemd sets `JOURNAL_STREAM=DEVICE:INODE` for a service whose standard error is the journal; a
    /// child that inherits the variable but writes elsewhere (a terminal, a pipe) must not use the format.
    public static func standardErrorIsJournal(environment value: String? = FileSystem.environment("JOURNAL_STREAM")) -> Bool {
        guard let value, let colon = value.firstIndex(of: ":"),
              let device = UInt64(value[..<colon]), let inode = UInt64(value[value.index(after: colon)...]) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
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

    private static func escaping(_ text: some StringProtocol, also extra: (Unicode.Scalar) -> Bool) -> String {
        let scalars = text.unicodeScalars
        guard scalars.contains(where: { isUnsafeInLog($0) || extra($0) }) else { return String(text) }
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
