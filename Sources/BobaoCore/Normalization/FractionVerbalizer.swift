/// Fractions: `3/16` 十六分之三, `1/2` 二分之一. (A month/day such as `11/29号` is taken by the date rule
/// first.)
struct FractionVerbalizer: Verbalizer {
    let category = "fraction"

    func verbalize(_ span: NumericSpan, in context: SpanContext) -> Verbalization? {
        guard span.separators == ["/"], span.groups.allSatisfy({ $0.count <= 9 && !($0.count > 1 && $0.first == "0") }),
              let numerator = UInt64(span.groups[0]), let denominator = UInt64(span.groups[1]),
              denominator != 0 else { return nil }
        return Verbalization(
            ChineseNumerals.cardinal(denominator) + "分之" + ChineseNumerals.cardinal(numerator), takesSign: true)
    }
}
