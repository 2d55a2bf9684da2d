import BobaoCore

/// libFuzzer target for the normalizer: any text in, and every digit (ASCII or full-width) must come out
/// as words; text without digits must come out unchanged.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNormalizer(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let normalizer = TextNormalizer.standard
    let spoken = normalizer.normalize(text)
    let isDigit: (Unicode.Scalar) -> Bool = { ("0"..."9").contains($0) || (0xFF10...0xFF19).contains($0.value) }
    if !text.unicodeScalars.contains(where: isDigit) {
        precondition(spoken == text, "text without digits changed")
    }
    precondition(!spoken.unicodeScalars.contains(where: isDigit), "a digit was left for eSpeak: \(spoken)")
    let decisions = normalizer.explain(text)
    precondition(decisions.allSatisfy { !$0.spoken.isEmpty }, "an empty reading")
    return 0
}
