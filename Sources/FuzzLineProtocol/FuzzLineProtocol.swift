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
    return 0
}
