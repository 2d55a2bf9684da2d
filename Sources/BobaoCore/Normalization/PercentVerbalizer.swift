/// Percentages: `6.3%` 百分之六点三, `50％` 百分之五十, `-2%` 负百分之二; also ‰ 千分之.
struct PercentVerbalizer: Verbalizer {
    let category = "percent"

    func verbalize(_ span: NumericSpan, in context: SpanContext) -> Verbalization? {
        guard let next = context.next, next == "%" || next == "‰",
              let amount = span.amount else { return nil }
        let fraction = String(amount.fraction.reversed().drop { $0 == "0" }.reversed())
        let number = ChineseNumerals.decimal(whole: amount.whole, fraction: fraction)
        return Verbalization((next == "%" ? "百分之" : "千分之") + number, consumedAfter: 1, takesSign: true)
    }
}
