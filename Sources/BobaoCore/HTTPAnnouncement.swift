import Glibc

/// An announcement sent over HTTP (`POST /announce`, `GET /announce?text=…`) read into the same `Submission`
/// a line would give, with the same checks: a plain-text body in the charset its `Content-Type` names, a
/// form, or the line protocol's JSON object. Query fields (`?wait=1`, `?priority=urgent`) join the body's,
/// as if the body had them; a field given in both is refused as given twice.
public enum HTTPAnnouncement {
    /// Reads the request. `query` is the URL's arguments, already percent-decoded.
    /// `defaultCharset`: what a body whose `Content-Type` names no charset is in (`--encoding`; UTF-8).
    public static func read(
        contentType: String?, body: [UInt8], query: [(name: String, value: String)], rules: MessageRules = MessageRules(),
        defaultCharset: String = "UTF-8"
    ) -> Result<Submission, HTTPFailure> {
        let members: [JSONValue.Member]
        switch fields(contentType: contentType, body: body, query: query, plainField: "text", defaultCharset: defaultCharset) {
        case .failure(let failure): return .failure(failure)
        case .success(let given): members = given
        }
        if !members.contains(where: { $0.name == "text" && $0.value != .null }) {
            if let command = members.first(where: { $0.name == "cmd" }), case .string(let name) = command.value {
                return .failure(HTTPFailure(.badField(
                    "cmd", "commands have their own routes (POST /\(JSONRequest.shown(name)), GET /status)")))
            }
            return .failure(HTTPFailure(.badField("text", "missing (send it as the body, a form field or ?text=)")))
        }
        switch JSONRequest.request(fields: members, rules: rules) {
        case .submission(let submission): return .success(submission)
        case .invalid(let refusal): return .failure(HTTPFailure(refusal))
        default: return .failure(HTTPFailure(.badField("cmd", "commands have their own routes (POST /skip, GET /status)")))
        }
    }

    /// A command sent to its route: `cmd` is the route's command, the body and query give its fields
    /// (a plain-text body is `value`, for `PUT /volume` with `70`).
    public static func command(
        _ name: String, contentType: String?, body: [UInt8], query: [(name: String, value: String)],
        defaultCharset: String = "UTF-8"
    ) -> Result<ClientCommand, HTTPFailure> {
        let members: [JSONValue.Member]
        switch fields(contentType: contentType, body: body, query: query, plainField: "value", defaultCharset: defaultCharset) {
        case .failure(let failure): return .failure(failure)
        case .success(let given): members = given
        }
        if members.contains(where: { $0.name == "cmd" }) {
            return .failure(HTTPFailure(.badField("cmd", "is the route's (/\(name)); leave it out")))
        }
        switch JSONRequest.request(fields: [JSONValue.Member(name: "cmd", value: .string(name))] + members) {
        case .command(let command): return .success(command)
        case .invalid(let refusal): return .failure(HTTPFailure(refusal))
        default: return .failure(HTTPFailure(.badField("cmd", "missing")))
        }
    }

    /// The fields a body and a query give, as JSON members: a JSON object's, a form's (typed as its JSON
    /// would be), or a plain-text body as `plainField`; then the query's.
    static func fields(
        contentType: String?, body: [UInt8], query: [(name: String, value: String)], plainField: String,
        defaultCharset: String
    ) -> Result<[JSONValue.Member], HTTPFailure> {
        var type = ContentType(contentType ?? "text/plain")
        if type.charset == nil { type.charset = defaultCharset }
        var members: [JSONValue.Member]
        switch type.mediaType {
        case _ where body.isEmpty:
            members = []
        case "text/plain":
            guard var text = type.text(body) else { return .failure(type.charsetFailure) }
            text = text.replacingCRLF()  // one space for a line break, as for a lone LF
            let value: JSONValue = plainField == "text" ? .string(text) : FormFields.typed(plainField, text.trimmingWhitespace())
            members = [JSONValue.Member(name: plainField, value: value)]
        case "application/x-www-form-urlencoded":
            guard let utf8 = type.utf8(body), let fields = FormFields.decode(utf8) else {
                return .failure(type.charsetFailure)
            }
            if !body.contains(UInt8(ascii: "=")) {
                // `curl -d 'text'` sends a form that is only text: taken as the text, not as a field named so.
                let text = fields.map(\.name).joined(separator: "&")
                members = [JSONValue.Member(name: plainField, value: FormFields.typed(plainField, text))]
            } else {
                members = FormFields.members(fields)
            }
        case "application/json":
            guard let utf8 = type.utf8(body), let text = String(validating: utf8, as: UTF8.self) else {
                return .failure(type.charsetFailure)
            }
            let value: JSONValue
            do {
                value = try JSONValue.parse(text)
            } catch {
                return .failure(HTTPFailure(JSONRequest.syntaxRefusal(error, in: text, leadingCharacters: 0)))
            }
            guard case .object(let given) = value else { return .failure(HTTPFailure(.badJSON("not a JSON object"))) }
            members = given
        default:
            return .failure(.unsupportedType(type.mediaType))
        }
        return .success(members + FormFields.members(query))
    }

    /// `text/plain; charset=gbk` as its parts.
    public struct ContentType: Sendable, Equatable {
        /// Lower case, without parameters.
        public var mediaType: String
        /// As given (nil: UTF-8).
        public var charset: String?

        public init(_ header: String) {
            let parts = header.split(separator: ";", omittingEmptySubsequences: false)
            mediaType = String(parts.first ?? "").trimmingWhitespace().lowercased()
            charset = nil
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, String(pair[0]).trimmingWhitespace().lowercased() == "charset" else { continue }
                var value = String(pair[1]).trimmingWhitespace()
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
                charset = value
            }
        }

        var charsetName: String { charset ?? "UTF-8" }

        var charsetFailure: HTTPFailure {
            Charset.isKnown(charsetName) ? .notInCharset(charsetName) : .unknownCharset(charsetName)
        }

        /// The body as UTF-8 bytes (not yet checked to be valid UTF-8 when it was sent as such).
        func utf8(_ body: [UInt8]) -> [UInt8]? {
            Charset.utf8(from: body, charset: charsetName)
        }

        func text(_ body: [UInt8]) -> String? {
            utf8(body).flatMap { String(validating: $0, as: UTF8.self) }
        }
    }
}

/// Any charset iconv knows, by the name a `Content-Type` gives.
public enum Charset {
    /// Names are letters, digits and `-_.:()`; anything else is not looked up.
    static func isPlausible(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 40
            && name.utf8.allSatisfy { $0 < 0x80 && (isalnum(Int32($0)) != 0 || "-_.:()".utf8.contains($0)) }
    }

    static func isUTF8(_ name: String) -> Bool {
        ["utf-8", "utf8", "us-ascii", "ascii"].contains(name.lowercased())
    }

    public static func isKnown(_ name: String) -> Bool {
        guard !isUTF8(name) else { return true }
        guard isPlausible(name) else { return false }
        let converter = iconv_open("UTF-8", name)
        guard converter != UnsafeMutableRawPointer(bitPattern: -1) else { return false }
        iconv_close(converter)
        return true
    }

    /// The bytes converted to UTF-8; nil for an unknown charset or bytes not valid in it.
    public static func utf8(from bytes: [UInt8], charset: String) -> [UInt8]? {
        if isUTF8(charset) { return String(validating: bytes, as: UTF8.self) == nil ? nil : bytes }
        if let known = TextEncoding(name: charset) { return known.utf8(from: bytes) }
        guard isPlausible(charset) else { return nil }
        let converter = iconv_open("UTF-8", charset)
        guard converter != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        defer { iconv_close(converter) }
        var output = [UInt8](repeating: 0, count: bytes.count * 4 + 4)
        var input = bytes
        let written: Int? = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                var inPointer = UnsafeMutableRawPointer(inBuffer.baseAddress)?.assumingMemoryBound(to: CChar.self)
                var inLeft = inBuffer.count
                var outPointer = UnsafeMutableRawPointer(outBuffer.baseAddress)?.assumingMemoryBound(to: CChar.self)
                var outLeft = outBuffer.count
                guard iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft) != -1, inLeft == 0 else { return nil }
                return outBuffer.count - outLeft
            }
        }
        guard let written else { return nil }
        return Array(output.prefix(written))
    }
}

extension String {
    /// CR LF pairs as LF.
    func replacingCRLF() -> String {
        guard contains("\r\n") else { return self }
        var out = String.UnicodeScalarView()
        var pendingCR = false
        for scalar in unicodeScalars {
            if pendingCR && scalar != "\n" { out.append("\r") }
            pendingCR = scalar == "\r"
            if !pendingCR { out.append(scalar) }
        }
        if pendingCR { out.append("\r") }
        return String(out)
    }
}
