/// Dates: `2026-11-29`, `2026/11/29`, `2026.11.29` → 二零二六年十一月二十九日; a four-digit year before 年
/// (2026年 → 二零二六年); a month and day with a slash before 日 or 号 (11/29号 → 十一月二十九号). Years are read
/// digit by digit, months and days as numbers.
struct DateVerbalizer: Verbalizer {
    let category = "date"

    func verbalize(_ span: NumericSpan, in context: SpanContext) -> Verbalization? {
        let next = context.next
        // 2026年: a year, said digit by digit (a duration like 3年 or 300年 is left to the cardinal rules).
        if span.isPlainInteger, span.groups[0].count == 4, next == "年",
           let year = span.integerValue, (1000...2999).contains(year) {
            return Verbalization(ChineseNumerals.digitByDigit(span.groups[0]))
        }
        let dayWord = next == "日" || next == "号"
        // 11/29日, 11/29号: month and day.
        if span.separators == ["/"], dayWord, span.groups.allSatisfy({ $0.count <= 2 }),
           let month = UInt64(span.groups[0]), (1...12).contains(month),
           let day = UInt64(span.groups[1]), (1...31).contains(day) {
            return Verbalization(ChineseNumerals.cardinal(month) + "月" + ChineseNumerals.cardinal(day))
        }
        // Year, month and day joined by one kind of separator.
        guard span.groups.count == 3, let separator = span.uniformSeparator, "-/.".contains(separator),
              span.groups[0].count == 4, let year = UInt64(span.groups[0]), (1000...2999).contains(year),
              span.groups[1].count <= 2, span.groups[2].count <= 2,
              let month = UInt64(span.groups[1]), (1...12).contains(month),
              let day = UInt64(span.groups[2]), (1...31).contains(day) else { return nil }
        let spoken = ChineseNumerals.digitByDigit(span.groups[0]) + "年" + ChineseNumerals.cardinal(month) + "月"
            + ChineseNumerals.cardinal(day)
        // Keep a 日 or 号 that is written after it; otherwise say 日.
        return Verbalization(dayWord ? spoken : spoken + "日")
    }
}
