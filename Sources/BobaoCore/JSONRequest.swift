/// A JSON line of the protocol: one object, either an announcement with its options
/// (`{"text": "新客户来了", "priority": "urgent"}`) or a command (`{"cmd": "skip"}`).
///
/// Every refusal names what is wrong: `bad-json` with where the JSON breaks, `bad-field` with the field
/// and why. Client text echoed in a reason is quoted with `JSONText.quote`, so replies stay one line of
/// ASCII whatever was sent.
public enum JSONRequest {
    /// The fields an object may hold; `null` for any of them is the same as leaving it out, but for the
    /// `value` of `volume`.
    enum Field: String, CaseIterable {
        case text, priority, `repeat`, chime, voice, rate, pitch, volume, id, ttl
        case maximumSpeech = "max_speech"
        case wait, cmd, all, value
    }

    /// Reads `text`, a trimmed line whose first character is `{` (valid UTF-8, without raw control
    /// characters but tabs: `LineProtocol.parse` checks both). `leadingCharacters` is the white space trimmed
    /// off its front, so positions count from the start of the line as sent.
    public static func parse(_ text: String, leadingCharacters: Int = 0, rules: MessageRules = MessageRules())
        -> LineProtocol.Request
    {
        let value: JSONValue
        do {
            value = try JSONValue.parse(text)
        } catch {
            return .invalid(syntaxRefusal(error, in: text, leadingCharacters: leadingCharacters))
        }
        guard case .object(let members) = value else { return .invalid(.badJSON("not a JSON object")) }
        do {
            return try read(members, rules: rules)
        } catch {
            return .invalid(error)
        }
    }

    /// Reads fields that came some other way than a JSON line (an HTTP form or query), already typed as
    /// JSON values, with the same checks and refusals as a line's object.
    public static func request(fields members: [JSONValue.Member], rules: MessageRules = MessageRules())
        -> LineProtocol.Request
    {
        do {
            return try read(members, rules: rules)
        } catch {
            return .invalid(error)
        }
    }

    /// `not valid JSON at character 17 (near "x}")`, counting characters (not bytes, which differ between
    /// the line as sent in GBK and as read) from 1.
    static func syntaxRefusal(_ error: JSONValue.SyntaxError, in text: String, leadingCharacters: Int)
        -> LineProtocol.Refusal
    {
        let bytes = text.utf8
        guard error.offset < bytes.count else {
            return .badJSON("not valid JSON: the line ends before the object does")
        }
        let before = bytes.prefix(error.offset).filter { $0 & 0xC0 != 0x80 }.count
        let rest = String(decoding: bytes.dropFirst(error.offset), as: UTF8.self)
        return .badJSON("not valid JSON at character \(leadingCharacters + before + 1) (near \(shown(rest, quoted: true, limit: 12)))")
    }

    private static func read(_ members: [JSONValue.Member], rules: MessageRules) throws(LineProtocol.Refusal)
        -> LineProtocol.Request
    {
        var given: [(Field, JSONValue)] = []
        for member in members {
            guard let field = Field(rawValue: member.name) else {
                let known = Field.allCases.map(\.rawValue).joined(separator: ", ")
                throw .badField(shown(member.name), "unknown field (known: \(known))")
            }
            guard !given.contains(where: { $0.0 == field }) else { throw .badField(field.rawValue, "given twice") }
            given.append((field, member.value))
        }
        let set = given.filter { $0.1 != .null }
        if let (_, command) = set.first(where: { $0.0 == .cmd }) {
            let nullValue = given.contains { $0.0 == .value && $0.1 == .null }
            return .command(try readCommand(command, with: set, nullValue: nullValue))
        }
        return .submission(try readSubmission(set, rules: rules))
    }

    // MARK: Commands

    /// A command and the fields that go with it. `nullValue`: the line gave `"value": null`, which for `volume`
    /// is refused rather than read as a question (a client that meant to set the volume must not be told
    /// what it is as if that had worked).
    private static func readCommand(_ value: JSONValue, with fields: [(Field, JSONValue)], nullValue: Bool)
        throws(LineProtocol.Refusal) -> ClientCommand
    {
        guard case .string(let name) = value else {
            throw .badField("cmd", "must be a string: cancel, skip, clear, status or volume")
        }
        let isCancel = name == "cancel", isVolume = name == "volume"
        guard isCancel || isVolume || ["skip", "clear", "status"].contains(name) else {
            throw .badField("cmd", "unknown command \(shown(name, quoted: true)) (cancel, skip, clear, status, volume)")
        }
        var id: String?
        var all = false
        var percent: Int?
        for (field, value) in fields where field != .cmd {
            switch field {
            case .id where isCancel:
                id = try readID(value)
            case .all where isCancel:
                guard case .bool(let flag) = value else { throw .badField("all", "must be true or false") }
                all = flag
            case .id, .all:
                throw .badField(field.rawValue, "goes only with \"cmd\": \"cancel\"")
            case .value where isVolume:
                percent = try whole(value, in: ClientCommand.volumeRange, "value")
            case .value:
                throw .badField("value", "goes only with \"cmd\": \"volume\"")
            case .volume where isVolume:
                throw .badField("volume", "does not go with \"cmd\" (the volume command takes \"value\")")
            default:
                throw .badField(field.rawValue, "does not go with \"cmd\"")
            }
        }
        switch name {
        case "skip": return .skip
        case "clear": return .clear
        case "status": return .status
        case "volume":
            guard !nullValue else {
                let range = ClientCommand.volumeRange
                throw .badField("value", "must be a whole number from \(range.lowerBound) to \(range.upperBound) "
                    + "(leave it out to ask for the volume)")
            }
            return .volume(percent)
        default:
            if let id {
                guard !all else { throw .badField("all", "cannot go with id") }
                return .cancel(.id(id))
            }
            guard all else { throw .badField("id", "missing (or \"all\": true)") }
            return .cancel(.all)
        }
    }

    // MARK: Helpers

    /// `id`: a non-empty string without control characters, or a whole number (POS systems send order
    /// numbers as numbers) as its decimal digits. Numbers beyond 2^53 would arrive changed, so are refused.
    static func readID(_ value: JSONValue) throws(LineProtocol.Refusal) -> String {
        let why = "must be a string of 1 to \(MessageRules.maximumIDBytes) bytes or a whole number"
        switch value {
        case .string(let id):
            guard !id.isEmpty, id.utf8.count <= MessageRules.maximumIDBytes else { throw .badField("id", why) }
            guard !id.unicodeScalars.contains(where: isControl) else { throw .badField("id", "holds control characters") }
            return id
        case .number(let number):
            let largest = 9_007_199_254_740_991.0  // 2^53 - 1
            guard number.isFinite, number.rounded() == number else { throw .badField("id", why) }
            guard abs(number) <= largest else {
                throw .badField("id", "as a number must be at most \(Int64(largest)); send larger ones as strings")
            }
            return String(Int64(number))
        default:
            throw .badField("id", why)
        }
    }

    /// C0 and C1 controls and DEL.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Client text for a reason: as it is when it is a plain name (ASCII letters, digits, `_-.`, short),
    /// otherwise (or with `quoted`) quoted as JSON with all but printable ASCII escaped, and cut to `limit`
    /// characters.
    static func shown(_ text: String, quoted: Bool = false, limit: Int = 32) -> String {
        let scalars = text.unicodeScalars
        let plain = scalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "_-.".unicodeScalars.contains($0))
        }
        if !quoted && plain && !text.isEmpty && scalars.count <= limit { return text }
        guard scalars.count > limit else { return JSONText.quote(text) }
        return JSONText.quote(String(String.UnicodeScalarView(scalars.prefix(limit)))) + "..."
    }
}
