import BobaoCore
import Testing

/// cJSON's reading, with what Bobao adds: names given twice kept, `\u0000` kept, exact positions.
struct JSONValueTests {
    @Test func valuesOfEveryKind() throws {
        #expect(try JSONValue.parse(#" {"a": [1, -2.5e1, true, false, null, "x", {}], "b": {"c": "d"}} "#) == .object([
            .init(name: "a", value: .array([.number(1), .number(-25), .bool(true), .bool(false), .null, .string("x"), .object([])])),
            .init(name: "b", value: .object([.init(name: "c", value: .string("d"))])),
        ]))
    }

    @Test func aNameGivenTwiceIsKeptTwice() throws {
        #expect(try JSONValue.parse(#"{"a": 1, "a": 2}"#) == .object([.init(name: "a", value: .number(1)), .init(name: "a", value: .number(2))]))
    }

    @Test func nulEscapesAreKeptWhereCJSONWouldEndTheString() throws {
        #expect(try JSONValue.parse(#"{"a\u0000b": "c\u0000d\u0000"}"#)
            == .object([.init(name: "a\u{0}b", value: .string("c\u{0}d\u{0}"))]))
        #expect(try JSONValue.parse(#"["\\u0000", "\"\u0000", "\\\u0000"]"#)
            == .array([.string(#"\u0000"#), .string("\"\u{0}"), .string("\\\u{0}")]))
        // Outside a string it is no escape, and no JSON.
        #expect(throws: JSONValue.SyntaxError(offset: 1)) { try JSONValue.parse(#"[\u0000]"#) }
    }

    @Test func errorsAreWhereTheTextBreaks() {
        #expect(throws: JSONValue.SyntaxError(offset: 1)) { try JSONValue.parse("{oops}") }
        #expect(throws: JSONValue.SyntaxError(offset: 7)) { try JSONValue.parse(#"{"a":1,}"#) }
        #expect(throws: JSONValue.SyntaxError(offset: 5)) { try JSONValue.parse(#"{"a":tru}"#) }
        #expect(throws: JSONValue.SyntaxError(offset: 8)) { try JSONValue.parse(#"{"a":1} x"#) }
        // After an escape shortened for cJSON, positions still count the text as sent.
        #expect(throws: JSONValue.SyntaxError(offset: 17)) { try JSONValue.parse(#"["\u0000\u0000", x]"#) }
        #expect(throws: JSONValue.SyntaxError(offset: 4)) { try JSONValue.parse("[1, ") }
        #expect(throws: JSONValue.SyntaxError(offset: 0)) { try JSONValue.parse("") }
    }

    @Test func numbersAreDoublesAsCJSONReadsThem() throws {
        #expect(try JSONValue.parse("[1e400, 01, 9007199254740993]") == .array([.number(.infinity), .number(1), .number(9007199254740992)]))
    }
}

extension JSONValueTests {
    @Test func nestingIsReadUpToCJSONsLimit() throws {
        func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        var value = try JSONValue.parse(nested(1000))
        var depth = 0
        while case .array(let items) = value {
            depth += 1
            value = items.first ?? .null
        }
        #expect(depth == 1000)
        #expect(throws: JSONValue.SyntaxError.self) { try JSONValue.parse(nested(1001)) }
    }

    @Test func aNULByteIsNoJSON() {
        #expect(throws: JSONValue.SyntaxError(offset: 7)) { try JSONValue.parse("{\"a\":1}\u{0}garbage") }
        #expect(throws: JSONValue.SyntaxError(offset: 12)) { try JSONValue.parse("[\"\\u0000\", \"\u{0}\"]") }
    }
}
