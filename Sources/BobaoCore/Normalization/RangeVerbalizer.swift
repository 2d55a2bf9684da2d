/// Ranges: `3-5个` 三到五个, `2~3天` 两到三天, `10-20元` 十到二十元, `1990-2000年` 一九九零到二零零零年.
/// A dash between numbers that do not rise is not a range; it is said as 杠, and groups of three digits or
/// more are read digit by digit as in house and room numbers (3-2-501 三杠二杠五零一).
struct RangeVerbalizer: Verbalizer {
    let category = "range"

    func verbalize(_ span: NumericSpan, in context: SpanContext) -> Verbalization? {
        guard let separator = span.uniformSeparator, separator == "-" || separator == "~" else { return nil }
        if span.groups.count == 2, let low = parse(span.groups[0]), let high = parse(span.groups[1]), high.value > low.value {
            // Years: 1990-2000年.
            if context.next == "年" && span.groups.allSatisfy({ $0.count == 4 }) {
                return Verbalization(span.groups.map { ChineseNumerals.digitByDigit($0) }.joined(separator: "到"))
            }
            let counting = Lexicon.counts(context)
            return Verbalization(say(low, counting: counting) + "到" + say(high, counting: counting))
        }
        guard separator == "-" else { return nil }
        return Verbalization(span.groups.map { group in
            group.first == "0" || group.count >= 3 ? ChineseNumerals.digitByDigit(group)
                : ChineseNumerals.cardinal(UInt64(group) ?? 0)
        }.joined(separator: "杠"))
    }

    private func parse(_ group: String) -> (value: UInt64, text: String)? {
        guard group.count <= 12, !(group.count > 1 && group.first == "0"), let value = UInt64(group) else { return nil }
        return (value, group)
    }

    private func say(_ number: (value: UInt64, text: String), counting: Bool) -> String {
        counting ? ChineseNumerals.counting(number.value) : ChineseNumerals.cardinal(number.value)
    }
}
