/// A JSON object line from the server (an event, the status report) as its leaves in order, each under a
/// dotted path: `{"sound":{"state":"ready"}}` has `sound.state`, array items are numbered (`list.0`).
///
/// Meant for the server's own lines, which are ASCII with `\uXXXX` escapes; it still reads raw UTF-8 in
/// strings, refuses anything that is not one well-formed object, and stops at 32 levels of nesting.
// TODO(merge): use JSONValue (BobaoCore's cJSON wrapper) once it is merged, and drop this hand-parse.
struct FlatJSON {
    enum Value: Equatable {
        case string(String)
        /// As written, for example `12` or `-0.5`.
        case number(String)
        case bool(Bool)
        case null
    }

    private(set) var leaves: [(path: String, value: Value)] = []

    /// Nil when `line` is not one JSON object (white space around it is allowed).
    init?(_ line: String) {
        var scanner = Scanner(bytes: Array(line.utf8))
        scanner.skipSpace()
        guard scanner.peek == UInt8(ascii: "{"), scanner.value(at: "", depth: 0, into: &leaves) else { return nil }
        scanner.skipSpace()
        guard scanner.atEnd else { return nil }
    }

    subscript(path: String) -> Value? { leaves.first { $0.path == path }?.value }

    func string(_ path: String) -> String? {
        if case .string(let text) = self[path] { text } else { nil }
    }

    /// A number leaf as written.
    func number(_ path: String) -> String? {
        if case .number(let text) = self[path] { text } else { nil }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }
        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        /// Skips white space, then `byte` if it is next.
        mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard peek == byte else { return false }
            index += 1
            return true
        }

        mutating func value(at path: String, depth: Int, into leaves: inout [(path: String, value: Value)]) -> Bool {
            skipSpace()
            guard depth < 32, let byte = peek else { return false }
            switch byte {
            case UInt8(ascii: "{"):
                index += 1
                if take(UInt8(ascii: "}")) { return true }
                repeat {
                    skipSpace()
                    guard let key = string(), take(UInt8(ascii: ":")),
                          value(at: path.isEmpty ? key : path + "." + key, depth: depth + 1, into: &leaves) else { return false }
                } while take(UInt8(ascii: ","))
                return take(UInt8(ascii: "}"))
            case UInt8(ascii: "["):
                index += 1
                if take(UInt8(ascii: "]")) { return true }
                var position = 0
                repeat {
                    guard value(at: path + "." + String(position), depth: depth + 1, into: &leaves) else { return false }
                    position += 1
                } while take(UInt8(ascii: ","))
                return take(UInt8(ascii: "]"))
            case UInt8(ascii: "\""):
                guard let text = string() else { return false }
                leaves.append((path, .string(text)))
                return true
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                for (word, leaf) in [("true", Value.bool(true)), ("false", .bool(false)), ("null", .null)]
                where bytes[index...].starts(with: word.utf8) {
                    index += word.utf8.count
                    leaves.append((path, leaf))
                    return true
                }
                return false
            default:
                let start = index
                while let byte = peek, (0x30...0x39).contains(byte) || "+-.eE".utf8.contains(byte) { index += 1 }
                let text = String(decoding: bytes[start..<index], as: UTF8.self)
                guard byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte), Double(text) != nil else { return false }
                leaves.append((path, .number(text)))
                return true
            }
        }

        /// A string starting at the quote under `index`, escapes decoded (surrogate pairs joined).
        mutating func string() -> String? {
            guard peek == UInt8(ascii: "\"") else { return nil }
            index += 1
            var text = "", raw: [UInt8] = [], escaped: [UInt16] = []
            func flush() {
                text += String(decoding: raw, as: UTF8.self) + String(decoding: escaped, as: UTF16.self)
                raw.removeAll()
                escaped.removeAll()
            }
            while let byte = peek {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    flush()
                    return text
                case UInt8(ascii: "\\"):
                    guard let next = peek else { return nil }
                    index += 1
                    if next == UInt8(ascii: "u") {
                        guard index + 4 <= bytes.count,
                              bytes[index..<index + 4].allSatisfy({ Self.hexDigits.utf8.contains($0) }),
                              let unit = UInt16(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
                        else { return nil }
                        index += 4
                        if !raw.isEmpty { flush() }
                        escaped.append(unit)
                        continue
                    }
                    let simple: UInt8
                    switch next {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): simple = next
                    case UInt8(ascii: "b"): simple = 0x08
                    case UInt8(ascii: "f"): simple = 0x0C
                    case UInt8(ascii: "n"): simple = 0x0A
                    case UInt8(ascii: "r"): simple = 0x0D
                    case UInt8(ascii: "t"): simple = 0x09
                    default: return nil
                    }
                    if !escaped.isEmpty { flush() }
                    raw.append(simple)
                case 0..<0x20:
                    return nil  // control characters are escaped in JSON
                default:
                    if !escaped.isEmpty { flush() }
                    raw.append(byte)
                }
            }
            return nil
        }

        static let hexDigits = "0123456789abcdefABCDEF"
    }
}
