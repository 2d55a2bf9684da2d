import Glibc

/// The character encoding a connection's lines arrive in (`--encoding`). Lines in GBK or GB18030 are
/// converted to UTF-8 with glibc's iconv before anything else reads them; replies stay ASCII.
public enum TextEncoding: String, Sendable, CaseIterable {
    case utf8 = "UTF-8"
    /// The two-byte Chinese encoding of older Windows software and POS printers.
    case gbk = "GBK"
    /// GBK's superset, which covers all of Unicode.
    case gb18030 = "GB18030"

    /// `utf-8` (or `utf8`), `gbk`, `gb18030`, in any case.
    public init?(name: String) {
        switch name.lowercased() {
        case "utf-8", "utf8": self = .utf8
        case "gbk": self = .gbk
        case "gb18030": self = .gb18030
        default: return nil
        }
    }

    /// The name as `--encoding` takes it and refusals say it: `UTF-8`, `GBK`, `GB18030`.
    public var name: String { rawValue }

    /// The names `init(name:)` takes, for usage texts.
    public static let names = "utf-8, gbk, gb18030"

    /// `bytes` in UTF-8: as they are for `.utf8` (checked later, as every line is), converted otherwise;
    /// nil when they are not valid in this encoding, a sequence cut short at the end included.
    public func utf8(from bytes: [UInt8]) -> [UInt8]? {
        guard self != .utf8 else { return bytes }
        // Opened for each line (half a microsecond here): a converter holds state, which a session, a value
        // type, could not share safely between its copies.
        let converter = iconv_open("UTF-8", rawValue)
        guard converter != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        defer { iconv_close(converter) }
        // A character takes at least one byte, and becomes at most 4 bytes of UTF-8.
        var output = [UInt8](repeating: 0, count: bytes.count * 4)
        var input = bytes
        let written: Int? = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(inBuffer.baseAddress)?
                    .assumingMemoryBound(to: CChar.self)
                var inLeft = inBuffer.count
                var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(outBuffer.baseAddress)?
                    .assumingMemoryBound(to: CChar.self)
                var outLeft = outBuffer.count
                // EILSEQ (an invalid sequence), EINVAL (one cut short at the end): not this encoding.
                guard iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft) != -1 else { return nil }
                return outBuffer.count - outLeft
            }
        }
        guard let written else { return nil }
        return Array(output.prefix(written))
    }
}
