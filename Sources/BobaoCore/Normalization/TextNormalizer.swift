/// Turns the numbers in an announcement into the Chinese words a counter speaker says, before eSpeak
/// reads it: `支付宝到账128.50元` → 支付宝到账一百二十八点五元.
///
/// The tokenizer finds numeric spans; each span goes to the verbalizers in a fixed order of precedence, and
/// the first that recognizes it says it. The order is the explanation: a date is tried before a range (so
/// 2026-11-29 is not "2026 to 11"), a time before a score, money and percentages before plain numbers,
/// digit strings (phones, codes) before counting. Text that is not numeric passes through unchanged.
public struct TextNormalizer: Sendable {
    public let verbalizers: [any Verbalizer]

    public init(verbalizers: [any Verbalizer]) {
        self.verbalizers = verbalizers
    }

    /// The order of precedence used for every announcement.
    public static let standard = TextNormalizer(verbalizers: [
        DateVerbalizer(), TimeVerbalizer(), DigitStringVerbalizer(), MoneyVerbalizer(), PercentVerbalizer(),
        FractionVerbalizer(), RangeVerbalizer(), UnitVerbalizer(), CardinalVerbalizer(), SequenceVerbalizer(),
    ])

    /// One decision, for `bobao normalize --explain` and the log.
    public struct Decision: Sendable, Equatable, CustomStringConvertible {
        /// The original text replaced (the span and what was consumed around it).
        public var original: String
        public var spoken: String
        public var category: String

        public init(original: String, spoken: String, category: String) {
            self.original = original
            self.spoken = spoken
            self.category = category
        }

        public var description: String { "\(original) → \(spoken) [\(category)]" }
    }

    public func normalize(_ text: String) -> String { run(text, explaining: false).text }

    public func explain(_ text: String) -> [Decision] { run(text, explaining: true).decisions }

    private func run(_ text: String, explaining: Bool) -> (text: String, decisions: [Decision]) {
        // Fast path: nothing numeric at all.
        guard text.unicodeScalars.contains(where: { NumericTokenizer.isDigit(NumericTokenizer.fold($0)) }) else {
            return (text, [])
        }
        // Scalars folded for the rules; the UTF-8 offset of each scalar, to copy untouched text as bytes.
        let utf8 = Array(text.utf8)
        var folded: [Unicode.Scalar] = []
        var offsets: [Int] = []
        folded.reserveCapacity(utf8.count)
        offsets.reserveCapacity(utf8.count + 1)
        var offset = 0
        for scalar in text.unicodeScalars {
            folded.append(NumericTokenizer.fold(scalar))
            offsets.append(offset)
            offset += UTF8.width(scalar)
        }
        offsets.append(offset)
        var output: [UInt8] = []
        output.reserveCapacity(utf8.count * 2)
        var decisions: [Decision] = []
        var cursor = 0
        var previousSpokenEnd = -1
        let spans = NumericTokenizer.spans(in: folded)
        for (index, span) in spans.enumerated() where span.start >= cursor {
            let context = SpanContext(folded: folded, span: span)
            let next = index + 1 < spans.count ? spans[index + 1] : nil
            guard let (verbalizer, reading) = firstReading(span, context, before: next) else { continue }
            var start = span.start - min(reading.consumedBefore, span.start - cursor)
            var spoken = reading.spoken
            if start > cursor {
                let sign = folded[start - 1]
                if sign == "-" || sign == "~" {
                    if start - 1 == previousSpokenEnd {
                        // 3%-5%, 8:00-17:00: the dash between two numbers said aloud is 到.
                        spoken = "到" + spoken
                        start -= 1
                    } else if sign == "-" && reading.takesSign && isSignPosition(folded, start - 1) {
                        spoken = "负" + spoken
                        start -= 1
                    }
                }
            }
            output.append(contentsOf: utf8[offsets[cursor]..<offsets[start]])
            output.append(contentsOf: spoken.utf8)
            let end = min(folded.count, span.end + reading.consumedAfter)
            if explaining {
                decisions.append(Decision(
                    original: String(decoding: utf8[offsets[start]..<offsets[end]], as: UTF8.self), spoken: spoken,
                    category: verbalizer.category))
            }
            cursor = end
            previousSpokenEnd = end
        }
        output.append(contentsOf: utf8[offsets[cursor]...])
        return (String(decoding: output, as: UTF8.self), decisions)
    }

    /// The first verbalizer's reading that does not end inside the `next` span (a unit such as `m3` must not
    /// swallow the first digit of `3:00` and leave the rest unread).
    private func firstReading(
        _ span: NumericSpan, _ context: SpanContext, before next: NumericSpan?
    ) -> (any Verbalizer, Verbalization)? {
        for verbalizer in verbalizers {
            guard let reading = verbalizer.verbalize(span, in: context) else { continue }
            let end = span.end + reading.consumedAfter
            if let next, end > next.start, end < next.end { continue }
            return (verbalizer, reading)
        }
        return nil
    }

    /// A minus sign, not a hyphen: at the start, or after a space, an opening bracket or a CJK character.
    private func isSignPosition(_ folded: [Unicode.Scalar], _ index: Int) -> Bool {
        guard index > 0 else { return true }
        let before = folded[index - 1]
        if before.properties.isWhitespace || "([{:=<>，。：；、（【".unicodeScalars.contains(before) { return true }
        return before.value >= 0x2E80 && !NumericTokenizer.isDigit(before)
    }
}
