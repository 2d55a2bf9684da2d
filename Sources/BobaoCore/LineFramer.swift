/// Splits a byte stream into announcement lines: LF or CRLF ends a line, a last line without a newline
/// counts when the stream ends, and a line longer than the limit is reported once and the rest of it
/// discarded up to its newline.
public struct LineFramer: Sendable {
    public enum Item: Sendable, Equatable {
        /// A complete line without its terminator (and without a trailing CR).
        case line([UInt8])
        /// A line that went past `maximumLineBytes`; its bytes up to the next newline are dropped.
        case tooLong
    }

    public let maximumLineBytes: Int
    private var pending: [UInt8] = []
    private var discarding = false

    public init(maximumLineBytes: Int = 4096) {
        self.maximumLineBytes = maximumLineBytes
    }

    /// Bytes held for a line not yet ended.
    public var bufferedByteCount: Int { pending.count }

    /// Feeds bytes in; returns the items they complete, in order.
    public mutating func push(_ bytes: some Collection<UInt8>) -> [Item] {
        var items: [Item] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if discarding {
                    discarding = false
                } else {
                    items.append(.line(Self.withoutCR(pending)))
                }
                pending.removeAll(keepingCapacity: true)
            } else if !discarding {
                pending.append(byte)
                // A CR that ends a CRLF is not part of the line, so allow one byte more for it.
                if pending.count > maximumLineBytes + 1
                    || (pending.count == maximumLineBytes + 1 && byte != UInt8(ascii: "\r")) {
                    items.append(.tooLong)
                    discarding = true
                    pending.removeAll(keepingCapacity: true)
                }
            }
        }
        return items
    }

    /// The stream ended: a last line without a newline still counts.
    public mutating func finish() -> [Item] {
        defer { pending.removeAll(); discarding = false }
        guard !discarding, !pending.isEmpty else { return [] }
        return [.line(Self.withoutCR(pending))]
    }

    private static func withoutCR(_ line: [UInt8]) -> [UInt8] {
        line.last == UInt8(ascii: "\r") ? Array(line.dropLast()) : line
    }
}
