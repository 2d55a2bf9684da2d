/// Clock times and scores, both written with a colon.
///
/// `14:30` 十四点三十分, `2:02` 两点零二分, `11:00` 十一点, `13:10:36` 十三点十分三十六秒. A colon pair
/// that cannot be a time (`78:96`) or that follows words of a match or a ratio (比分 3:2) is a score:
/// 三比二.
struct TimeVerbalizer: Verbalizer {
    let category = "time"

    static let scoreWords = Lexicon.words([
        "比分", "比赛", "战胜", "击败", "打败", "得分", "比例", "赢", "输", "战平", "vs", "VS", "对阵", "比",
    ])

    func verbalize(_ span: NumericSpan, in context: SpanContext) -> Verbalization? {
        guard span.uniformSeparator == ":", (2...3).contains(span.groups.count),
              span.groups.allSatisfy({ $0.count <= 3 }) else { return nil }
        let values = span.groups.compactMap { UInt64($0) }
        guard values.count == span.groups.count else { return nil }
        let isClock = values[0] <= 24 && span.groups.dropFirst().allSatisfy { $0.count == 2 }
            && values.dropFirst().allSatisfy { $0 <= 59 }
        if span.groups.count == 2 && (!isClock || context.mentions(Self.scoreWords, within: 8)) {
            return Verbalization(ChineseNumerals.cardinal(values[0]) + "比" + ChineseNumerals.cardinal(values[1]))
        }
        guard isClock else { return nil }
        var spoken = (values[0] == 2 ? "两" : ChineseNumerals.cardinal(values[0])) + "点"
        let minutes = values[1], seconds = values.count == 3 ? values[2] : 0
        if minutes > 0 || seconds > 0 {
            spoken += (minutes < 10 && minutes > 0 ? "零" : "") + ChineseNumerals.cardinal(minutes) + "分"
        }
        if seconds > 0 {
            spoken += ChineseNumerals.cardinal(seconds) + "秒"
        }
        return Verbalization(spoken)
    }
}
