/// Splits a byte stream into announcement lines: LF or CRLF ends a line, a last line without a newline
/// counts when the stream ends, and a line longer than the limit is reported once and the rest of it
/// discarded up to its newline.
///
/// Incremental: `append` buffers bytes, `next` hands out one item at a time, so a caller can stop between
/// lines (when a client's replies pile up) and go on later. It never holds more than what was appended
/// and not yet taken, and never more than `maximumLineBytes` of a line it is discarding.
public struct LineFramer: Sendable {
    public enum Item: Sendable, Equatable {
        /// A complete line without its terminator (and without a trailing CR).
        case line([UInt8])
        /// A line that went past `maximumLineBytes`; its bytes up to the next newline are dropped.
        case tooLong
    }

    public let maximumLineBytes: Int
    private var buffer: [UInt8] = []
    /// The first byte not yet handed out.
    private var start = 0
    /// Bytes after `start` already searched for a newline.
    private var scanned = 0
    /// Inside a line already reported too long: drop bytes up to its newline.
    private var discarding = false

    public init(maximumLineBytes: Int = 4096) {
        self.maximumLineBytes = maximumLineBytes
    }

    /// Bytes held that no item has taken yet.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Buffers bytes; take the lines they complete with `next()`.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 2 * maximumLineBytes + 16_384)
            start = 0
        } else if start > 4096 && start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Up to `count` of the buffered bytes, without taking them.
    public func peek(_ count: Int) -> [UInt8] {
        Array(buffer[start..<min(buffer.count, start + count)])
    }

    /// The next complete item, or nil until more bytes arrive.
    public mutating func next() -> Item? {
        while start < buffer.count {
            let from = start + scanned
            guard let newline = buffer[from...].firstIndex(of: UInt8(ascii: "\n")) else {
                scanned = buffer.count - start
                if discarding {
                    start = buffer.count
                    scanned = 0
                    return nil
                }
                // A CR that ends a CRLF is not part of the line, so allow one byte more for it.
                let pending = buffer.count - start
                if pending > maximumLineBytes + 1 || (pending == maximumLineBytes + 1 && buffer.last != UInt8(ascii: "\r")) {
                    discarding = true
                    start = buffer.count
                    scanned = 0
                    return .tooLong
                }
                return nil
            }
            let lineStart = start
            start = newline + 1
            scanned = 0
            if discarding {
                discarding = false
                continue
            }
            var end = newline
            if end > lineStart && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            return end - lineStart > maximumLineBytes ? .tooLong : .line(Array(buffer[lineStart..<end]))
        }
        return nil
    }

    /// The stream ended: a last line without a newline still counts.
    public mutating func finishItem() -> Item? {
        defer {
            buffer.removeAll()
            start = 0
            scanned = 0
            discarding = false
        }
        guard !discarding, start < buffer.count else { return nil }
        var end = buffer.count
        if buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        return end - start > maximumLineBytes ? .tooLong : .line(Array(buffer[start..<end]))
    }

    // MARK: All at once

    /// Feeds bytes in; returns every item they complete, in order.
    public mutating func push(_ bytes: some Collection<UInt8>) -> [Item] {
        append(bytes)
        var items: [Item] = []
        while let item = next() { items.append(item) }
        return items
    }

    /// The stream ended: returns the last line if one was left without a newline.
    public mutating func finish() -> [Item] {
        var items: [Item] = []
        while let item = next() { items.append(item) }
        if let last = finishItem() { items.append(last) }
        return items
    }
}
