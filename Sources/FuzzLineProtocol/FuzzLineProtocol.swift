import BobaoCore

/// libFuzzer target for the line protocol: bytes are cut into chunks (the first byte picks the chunk size,
/// as a network would deliver them), framed into lines and parsed. Checks the framer's promises.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLineProtocol(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
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
        switch LineProtocol.parse(line) {
        case .announce(let text):
            precondition(!text.isEmpty && text.unicodeScalars.allSatisfy { $0.value >= 0x20 || $0 == "\t" })
            precondition(text.unicodeScalars.last.map { !$0.properties.isWhitespace } ?? false, "untrimmed text")
        case .auth, .blank, .invalid:
            break
        }
    }
    let newlines = bytes.dropFirst().filter { $0 == UInt8(ascii: "\n") }.count
    precondition(items.count <= newlines + 1, "more items than lines")
    _ = lines
    fuzzSession(bytes, chunk: chunk, token: first & 0x80 != 0 ? "s3cret" : nil)
    return 0
}

/// The same bytes through a `LineSession`, with a small per-call line budget: its promises hold whatever
/// arrives and however it is cut.
private func fuzzSession(_ bytes: [UInt8], chunk: Int, token: String?) {
    var configuration = LineSession.Configuration()
    configuration.maximumLineBytes = 64
    configuration.token = token
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
            case .announce(let submission):
                let text = submission.text
                precondition(session.authenticated, "an announcement before authenticating")
                precondition(!text.isEmpty && text.utf8.count <= 64)
                precondition(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\t" || (0x7F...0x9F).contains($0.value) })
                announcements += 1
            case .reply(let text):
                precondition(text.hasSuffix("\n") && text.dropLast().allSatisfy { $0 != "\n" }, "a reply is one line")
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
