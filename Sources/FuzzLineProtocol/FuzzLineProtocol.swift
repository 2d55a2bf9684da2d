import BobaoCore

/// libFuzzer target for the line protocol: bytes are cut into chunks (as a network would deliver them),
/// framed into lines and parsed, plain and JSON lines alike. Checks the framer's and the parser's promises.
///
/// The first byte is the set-up: its value modulo 17 picks the chunk size, bit 7 a token, bits 5 and 6
/// the encoding (UTF-8, GBK, GB18030, UTF-8), bit 4 a set of known voices and chimes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLineProtocol(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let encoding = [TextEncoding.utf8, .gbk, .gb18030, .utf8][Int(first >> 5) & 3]
    let rules = first & 0x10 != 0 ? MessageRules(voices: ["zh", "yue"], chimes: ["ding"]) : MessageRules()
    let limit = 64
    var framer = LineFramer(maximumLineBytes: limit)
    var items: [LineFramer.Item] = []
    let chunk = Int(first % 17) + 1
    var index = 1
    while index < bytes.count {
        let end = min(bytes.count, index + chunk)
        items += framer.push(bytes[index..<end])
        index = end
    }
    items += framer.finish()
    var lines = 0
    for item in items {
        guard case .line(let line) = item else { continue }
        lines += 1
        precondition(line.count <= limit, "a line longer than the limit got through")
        precondition(!line.contains(UInt8(ascii: "\n")), "a line holds a newline")
        // Only the CR of the CRLF ending is removed: `b\r\r\n` leaves `b\r`, which the parser then trims as
        // white space (found by this fuzzer; the check below is what actually matters).
        switch LineProtocol.parse(line, encoding: encoding, rules: rules) {
        case .announce(let text):
            precondition(!text.isEmpty && text.unicodeScalars.allSatisfy { $0.value >= 0x20 || $0 == "\t" })
            precondition(text.unicodeScalars.last.map { !$0.properties.isWhitespace } ?? false, "untrimmed text")
            precondition(text.first != "{", "a line starting with { spoken as text")
        case .submission(let submission):
            check(submission, rules: rules)
        case .command(let command):
            if case .cancel(.id(let id)) = command { checkID(id) }
            if case .volume(let percent?) = command {
                precondition(ClientCommand.volumeRange.contains(percent), "a volume out of range got through")
            }
        case .invalid(let refusal):
            precondition(isOneASCIILine(LineProtocol.error(refusal)), "a refusal that is not one line of ASCII")
        case .auth, .blank:
            break
        }
    }
    let newlines = bytes.dropFirst().filter { $0 == UInt8(ascii: "\n") }.count
    precondition(items.count <= newlines + 1, "more items than lines")
    _ = lines
    fuzzSession(bytes, chunk: chunk, token: first & 0x80 != 0 ? "s3cret" : nil, encoding: encoding, rules: rules)
    return 0
}

/// What a JSON announcement promises whatever the line held.
private func check(_ submission: Submission, rules: MessageRules) {
    let text = submission.text, options = submission.options
    precondition(!text.isEmpty, "empty text")
    precondition(!text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "controls in text")
    precondition(!text.unicodeScalars.first!.properties.isWhitespace && !text.unicodeScalars.last!.properties.isWhitespace)
    precondition(MessageOptions.repeatRange.contains(options.repeatCount))
    precondition(options.rate.map(SpeechParameters.rateRange.contains) ?? true)
    precondition(options.pitch.map(SpeechParameters.pitchRange.contains) ?? true)
    precondition(options.volume.map(MessageOptions.messageVolumeRange.contains) ?? true)
    precondition(options.ttlSeconds.map { $0.isFinite && $0 > 0 && $0 <= MessageRules.maximumTTLSeconds } ?? true)
    precondition(options.maximumSpeechSeconds.map { $0.isFinite && $0 > 0 && $0 <= MessageRules.maximumSpeechSeconds } ?? true)
    if let voice = options.voice { precondition(rules.voices?.contains(voice) ?? MessageRules.isPlausibleName(voice)) }
    if case .named(let chime) = options.chime { precondition(rules.chimes?.contains(chime) ?? MessageRules.isPlausibleName(chime)) }
    if let id = options.clientID { checkID(id) }
}

private func checkID(_ id: String) {
    precondition(!id.isEmpty && id.utf8.count <= MessageRules.maximumIDBytes, "an id of \(id.utf8.count) bytes")
    precondition(!id.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "controls in an id")
}

private func isOneASCIILine(_ text: String) -> Bool {
    text.hasSuffix("\n") && text.utf8.dropLast().allSatisfy { (0x20...0x7E).contains($0) }
}

/// The same bytes through a `LineSession`, with a small per-call line budget: its promises hold whatever
/// arrives and however it is cut.
private func fuzzSession(_ bytes: [UInt8], chunk: Int, token: String?, encoding: TextEncoding, rules: MessageRules) {
    var configuration = LineSession.Configuration()
    configuration.maximumLineBytes = 64
    configuration.token = token
    configuration.encoding = encoding
    configuration.messageRules = rules
    var session = LineSession(peer: "192.0.2.1:1", host: "192.0.2.1", isLoopback: false, now: 0, configuration: configuration)
    var ledger = PeerLedger(rateLimiter: RateLimiter(perSecond: 5, burst: 3))
    var closed = false
    var announcements = 0
    var now = 0.0
    func take() {
        while true {
            var budget = 3
            guard let action = session.next(now: now, ledger: &ledger, budget: &budget) else {
                if budget > 0 { return }
                continue
            }
            precondition(!closed, "an action after the close")
            switch action {
            case .command:
                precondition(session.authenticated, "a command before authenticating")
                announcements += 1
            case .announce(let submission):
                let text = submission.text
                precondition(session.authenticated, "an announcement before authenticating")
                // A GBK or GB18030 byte becomes at most 3 bytes of UTF-8 (only 0x80, the euro sign, does).
                precondition(!text.isEmpty && text.utf8.count <= 3 * 64)
                precondition(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\t" || (0x7F...0x9F).contains($0.value) })
                announcements += 1
            case .reply(let text):
                precondition(isOneASCIILine(text), "a reply is one line of ASCII")
                precondition(text.hasPrefix("OK ") || text.hasPrefix("ERR "))
            case .close(let text):
                closed = true
                if let text { precondition(text.hasPrefix("ERR ") || text.hasPrefix("HTTP/1.1 400 ")) }
            }
        }
    }
    var index = 1
    while index < bytes.count {
        let end = min(bytes.count, index + chunk)
        bytes[index..<end].withUnsafeBytes { session.receive($0) }
        now += 0.01
        take()
        index = end
    }
    session.receiveEnd()
    take()
    precondition(announcements <= bytes.filter { $0 == UInt8(ascii: "\n") }.count + 1)
    _ = session.tick(now: now + 3600, ledger: &ledger)
    precondition(session.isClosed, "an hour later the session has timed out")
    _ = ledger.takeLog()
}
