/// `application/x-www-form-urlencoded` fields (an HTML form's body, a URL's query) and how they become the
/// fields of a JSON announcement, so a form and a JSON object are checked and refused alike.
public enum FormFields {
    /// Decodes `a=1&b=x+y%21` into `[("a", "1"), ("b", "x y!")]`, in order. Bytes that are not valid UTF-8
    /// after decoding make the whole body nil (the caller names the problem).
    public static func decode(_ body: [UInt8]) -> [(name: String, value: String)]? {
        var fields: [(name: String, value: String)] = []
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = unescape(parts[0]), let value = unescape(parts.count > 1 ? parts[1] : []) else {
                return nil
            }
            fields.append((name, value))
        }
        return fields
    }

    /// Percent-decoding with `+` as a space; a `%` not followed by two hex digits stays as it is.
    static func unescape(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                out.append(0x20)
            } else if byte == UInt8(ascii: "%"), index + 2 < bytes.endIndex,
                      let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2]) {
                out.append(high << 4 | low)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Every field a JSON announcement or command may hold.
    static let known = Set(JSONRequest.Field.allCases.map(\.rawValue))
    /// Fields that are numbers in a JSON announcement or command.
    static let numeric: Set<String> = ["repeat", "rate", "pitch", "volume", "ttl", "max_speech", "value"]
    /// Fields that are true or false (`chime` may also be a chime's name).
    static let switches: Set<String> = ["wait", "all", "chime"]

    /// The fields as JSON members: a number where the JSON object has a number (when the text reads as
    /// one; otherwise the string, which is then refused naming the field), `true`/`false` for switches
    /// (also `1`/`0`, `yes`/`no`, `on`/`off`), a string for the rest. An empty value of a known field is left
    /// out, as an empty form field means "not given"; an unknown name stays, to be refused naming it.
    public static func members(_ fields: [(name: String, value: String)]) -> [JSONValue.Member] {
        fields.compactMap { field in
            guard !field.value.isEmpty || !known.contains(field.name) else { return nil }
            return JSONValue.Member(name: field.name, value: typed(field.name, field.value))
        }
    }

    static func typed(_ name: String, _ value: String) -> JSONValue {
        if numeric.contains(name), let number = Double(value), number.isFinite,
           value.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2E || $0 == 0x2D || $0 == 0x2B }) {
            return .number(number)
        }
        if switches.contains(name) {
            switch value.lowercased() {
            case "true", "1", "yes", "on": return .bool(true)
            case "false", "0", "no", "off": return .bool(false)
            default: break
            }
        }
        return .string(value)
    }
}
