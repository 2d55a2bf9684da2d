import CJSON
import Glibc
import Synchronization

/// A JSON value read by cJSON and copied into Swift (the cJSON tree is freed before `parse` returns).
///
/// Read faithfully where cJSON alone would not be: an object keeps its members in order and keeps a name
/// given twice (cJSON keeps both), so a caller can refuse it; a string escaping `\u0000` holds U+0000
/// where cJSON would silently end the string. Numbers are doubles as cJSON reads them: `1e400` is infinite
/// and integers beyond 2^53 lose digits, so callers check ranges.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([Member])

    public struct Member: Sendable, Equatable {
        public var name: String
        public var value: JSONValue

        public init(name: String, value: JSONValue) {
            self.name = name
            self.value = value
        }
    }

    /// Text that is not one JSON value: `offset` is the UTF-8 byte of the text where cJSON gave up (the
    /// text's length when it ended too soon).
    public struct SyntaxError: Error, Equatable, Sendable {
        public var offset: Int

        public init(offset: Int) {
            self.offset = offset
        }
    }

    /// Parses `text` as exactly one JSON value, with white space around it and nothing else. A NUL byte is
    /// no JSON anywhere (cJSON would read the text only up to it).
    public static func parse(_ text: String) throws(SyntaxError) -> JSONValue {
        // The text is valid UTF-8, in which 0xFF never occurs: each `\u0000` escape inside a string becomes
        // that byte, which cJSON copies through as it is, and the conversion below reads back as U+0000.
        let source = Array(text.utf8)
        var buffer: [CChar] = []
        buffer.reserveCapacity(source.count + 1)
        var nulEscapes: [Int] = []  // where each shortened escape is in `buffer`
        var inString = false
        var index = 0
        while index < source.count {
            let byte = source[index]
            guard byte != 0 else { throw SyntaxError(offset: index) }
            if inString && byte == UInt8(ascii: "\\") {
                if source[(index + 1)...].starts(with: "u0000".utf8) {
                    nulEscapes.append(buffer.count)
                    buffer.append(CChar(bitPattern: 0xFF))
                    index += 6
                } else {
                    // The byte after a backslash is escaped: a quote there does not end the string.
                    buffer.append(contentsOf: source[index..<min(index + 2, source.count)].map { CChar(bitPattern: $0) })
                    index += 2
                }
                continue
            }
            if byte == UInt8(ascii: "\"") { inString.toggle() }
            buffer.append(CChar(bitPattern: byte))
            index += 1
        }
        buffer.append(0)

        let parsed: Result<JSONValue, SyntaxError> = cJSONLock.withLock { _ in
            buffer.withUnsafeBufferPointer { chars -> Result<JSONValue, SyntaxError> in
                let base = chars.baseAddress!
                var end: UnsafePointer<CChar>?
                // The length counts the terminating NUL: with require_null_terminated set, cJSON looks for it
                // within the length it is given.
                guard let root = cJSON_ParseWithLengthOpts(base, chars.count, &end, 1) else {
                    let stopped = correctedOffset(end.map { base.distance(to: $0) } ?? 0, in: chars)
                    let original = stopped + 5 * nulEscapes.prefix { $0 < stopped }.count
                    return .failure(SyntaxError(offset: min(original, text.utf8.count)))
                }
                defer { cJSON_Delete(root) }
                return .success(JSONValue(root))
            }
        }
        return try parsed.get()
    }

    /// Where cJSON stopped, made exact for a bad member name: its string parser reports one byte past where
    /// the opening quote should be (`{oops` at `p`, `{"a":1,}` past the end), while every other failure is
    /// reported where it is. A name is expected after `{` or `,` (and white space) inside an object.
    private static func correctedOffset(_ offset: Int, in bytes: UnsafeBufferPointer<CChar>) -> Int {
        func byte(_ index: Int) -> UInt8 { UInt8(bitPattern: bytes[index]) }
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
        let suspect = offset - 1
        guard suspect >= 0, suspect < bytes.count, byte(suspect) != UInt8(ascii: "\""), !isSpace(byte(suspect)) else { return offset }
        var before = suspect - 1
        while before >= 0 && isSpace(byte(before)) { before -= 1 }
        guard before >= 0, byte(before) == UInt8(ascii: "{") || byte(before) == UInt8(ascii: ",") else { return offset }
        // After a comma, a name is only expected in an object, not an array: find the innermost open one.
        var open: [UInt8] = []
        var inString = false
        var index = 0
        while index < suspect {
            let b = byte(index)
            if inString {
                if b == UInt8(ascii: "\\") { index += 1 } else if b == UInt8(ascii: "\"") { inString = false }
            } else if b == UInt8(ascii: "\"") {
                inString = true
            } else if b == UInt8(ascii: "{") || b == UInt8(ascii: "[") {
                open.append(b)
            } else if b == UInt8(ascii: "}") || b == UInt8(ascii: "]") {
                _ = open.popLast()
            }
            index += 1
        }
        return open.last == UInt8(ascii: "{") ? suspect : offset
    }

    /// Copies a cJSON item and everything under it. cJSON refuses nesting deeper than 1000, which bounds
    /// this recursion too.
    private init(_ item: UnsafeMutablePointer<cJSON>) {
        if cJSON_IsObject(item) != 0 || cJSON_IsArray(item) != 0 {
            var members: [Member] = []
            var child = item.pointee.child
            while let current = child {
                let name: UnsafeMutablePointer<CChar>? = current.pointee.string
                members.append(Member(name: name.map { JSONValue.text($0) } ?? "", value: JSONValue(current)))
                child = current.pointee.next
            }
            self = cJSON_IsObject(item) != 0 ? .object(members) : .array(members.map(\.value))
        } else if cJSON_IsString(item) != 0 {
            let value: UnsafeMutablePointer<CChar>? = item.pointee.valuestring
            self = .string(value.map { JSONValue.text($0) } ?? "")
        } else if cJSON_IsNumber(item) != 0 {
            self = .number(item.pointee.valuedouble)
        } else if cJSON_IsBool(item) != 0 {
            self = .bool(cJSON_IsTrue(item) != 0)
        } else {
            self = .null
        }
    }

    /// A string cJSON decoded, with each 0xFF (a `\u0000` escape, see `parse`) as U+0000. cJSON checks the
    /// escapes it decodes (a lone surrogate is a syntax error) and copies the rest of the valid input.
    private static func text(_ cString: UnsafePointer<CChar>) -> String {
        let bytes = UnsafeRawBufferPointer(start: cString, count: strlen(cString)).bindMemory(to: UInt8.self)
        return bytes.split(separator: 0xFF, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
            .joined(separator: "\u{0}")
    }
}

/// cJSON records each parse's failure in a global (the reason `cJSON_GetErrorPtr` is not used): parses are
/// taken one at a time so no two threads write it at once.
private let cJSONLock = Mutex(())
