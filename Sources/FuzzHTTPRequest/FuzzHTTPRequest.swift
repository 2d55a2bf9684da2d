import BobaoCore

/// libFuzzer target for what the HTTP port reads itself (libmicrohttpd parses the HTTP): a body in the
/// `Content-Type` it names, a query's fields, an `Authorization` header, `Origin`/`Host`. Checks that
/// whatever arrives becomes an announcement within the line protocol's rules or a refusal that is one JSON
/// object naming its problem.
///
/// Layout: the first byte picks the content type (low 3 bits) and a charset (next 2 bits); the rest is cut at
/// the first two zero bytes into the body, a query string (decoded as a form) and a header value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let types = ["text/plain", "application/json", "application/x-www-form-urlencoded", "text/plain; charset=gbk",
                 "application/json; charset=utf-8", "image/png", "text/plain; charset=ISO-8859-1", "TEXT/PLAIN;CHARSET=\"GB18030\""]
    let charsets = ["", "; charset=utf-8", "; charset=bogus", "; charset=UTF-16"]
    let type = types[Int(first & 7)] + (first & 7 < 3 ? charsets[Int(first >> 3) & 3] : "")
    let parts = bytes.dropFirst().split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false).map(Array.init)
    let body = parts[0]
    let query = parts.count > 1 ? FormFields.decode(parts[1]) ?? [] : []
    let header = parts.count > 2 ? String(decoding: parts[2], as: UTF8.self) : nil

    switch HTTPAnnouncement.read(contentType: type, body: body, query: query) {
    case .success(let submission):
        let text = submission.text
        precondition(!text.isEmpty, "empty text")
        precondition(!text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "controls in text")
        precondition(MessageOptions.repeatRange.contains(submission.options.repeatCount))
        if let id = submission.options.clientID {
            precondition(!id.isEmpty && id.utf8.count <= MessageRules.maximumIDBytes, "an id of \(id.utf8.count) bytes")
        }
    case .failure(let failure):
        checkFailure(failure)
    }
    for name in ["volume", "cancel", "skip", "clear", "status"] {
        switch HTTPAnnouncement.command(name, contentType: type, body: body, query: query) {
        case .success(let command):
            if case .volume(let percent?) = command { precondition(ClientCommand.volumeRange.contains(percent)) }
        case .failure(let failure):
            checkFailure(failure)
        }
    }
    _ = HTTPAccess.presentedToken(header)
    _ = HTTPAccess.crossSiteProblem(secFetchSite: header, origin: header, host: header)
    if let problem = HTTPAccess.hostProblem(header, isAddress: { $0 == "127.0.0.1" }) {
        precondition(problem.code == "bad-host")
    }
    return 0
}

/// A refusal is a 4xx or 5xx whose body is one line: a JSON object of printable ASCII.
private func checkFailure(_ failure: HTTPFailure) {
    precondition((400...599).contains(failure.status), "status \(failure.status)")
    let json = failure.json
    precondition(json.hasSuffix("}\n") && json.utf8.dropLast().allSatisfy { (0x20...0x7E).contains($0) }, "not one ASCII line")
    guard case .object(let members)? = try? JSONValue.parse(String(json.dropLast())) else {
        preconditionFailure("not a JSON object: \(json)")
    }
    precondition(members.map(\.name) == ["error", "message"], "fields \(members.map(\.name))")
    precondition(!failure.message.isEmpty, "a refusal without a reason")
}
