import BobaoCore

/// A JSON object line from the server (an event, the status report), read with BobaoCore's `JSONValue`
/// (cJSON), as its leaves in order, each under a dotted path: `{"sound":{"state":"ready"}}` has
/// `sound.state`, array items are numbered (`list.0`).
struct FlatJSON {
    enum Value: Equatable {
        case string(String)
        /// Whole numbers without a fraction (`12`), others as Swift prints them (`-0.5`).
        case number(String)
        case bool(Bool)
        case null
    }

    private(set) var leaves: [(path: String, value: Value)] = []

    /// Nil when `line` is not one JSON object (white space around it is allowed).
    init?(_ line: String) {
        guard case .object(let members)? = try? JSONValue.parse(line) else { return nil }
        for member in members { Self.flatten(member.value, at: member.name, into: &leaves) }
    }

    private static func flatten(_ value: JSONValue, at path: String, into leaves: inout [(path: String, value: Value)]) {
        switch value {
        case .null: leaves.append((path, .null))
        case .bool(let flag): leaves.append((path, .bool(flag)))
        case .string(let text): leaves.append((path, .string(text)))
        case .number(let number):
            let whole = number.isFinite && number == number.rounded() && abs(number) < 1e15
            leaves.append((path, .number(whole ? String(Int64(number)) : String(number))))
        case .array(let items):
            for (index, item) in items.enumerated() { flatten(item, at: "\(path).\(index)", into: &leaves) }
        case .object(let members):
            for member in members { flatten(member.value, at: "\(path).\(member.name)", into: &leaves) }
        }
    }

    subscript(path: String) -> Value? { leaves.first { $0.path == path }?.value }

    func string(_ path: String) -> String? {
        if case .string(let text) = self[path] { text } else { nil }
    }

    /// A number leaf as text.
    func number(_ path: String) -> String? {
        if case .number(let text) = self[path] { text } else { nil }
    }
}
