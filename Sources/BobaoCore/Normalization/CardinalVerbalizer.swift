/// Plain numbers: counted (1001 一千零一, 100000 十万, 1,280 一千二百八十), 两 before a measure word
/// (2个 两个, 2位 两位) but 二 in ordinals and labels (第2 第二, 2号 二号); decimals with 点 and the fraction
/// digit by digit (0.5 零点五, 6.42 六点四二).
struct CardinalVerbalizer: Verbalizer {
    let category = "cardinal"

    func verbalize(_ span: NumericSpan, in context: SpanContext) -> Verbalization? {
        if let parts = span.decimalParts {
            return Verbalization(ChineseNumerals.decimal(whole: parts.whole, fraction: parts.fraction), takesSign: true)
        }
        guard let value = span.integerValue ?? span.thousandsValue else { return nil }
        let counting = Lexicon.counts(context)
        return Verbalization(
            counting ? ChineseNumerals.counting(value) : ChineseNumerals.cardinal(value), takesSign: true)
    }
}

/// Whatever is left: groups read one by one, joined by what their separator says (1.2.3 一点二点三,
/// 3,4,5 三，四，五). Never fails, so the engine never reads a separator aloud in English.
struct SequenceVerbalizer: Verbalizer {
    let category = "sequence"

    func verbalize(_ span: NumericSpan, in context: SpanContext) -> Verbalization? {
        var spoken = ""
        for (index, group) in span.groups.enumerated() {
            if index > 0 {
                switch span.separators[index - 1] {
                case ".": spoken += "点"
                case ",": spoken += "，"
                case ":": spoken += "比"
                case "~": spoken += "到"
                default: spoken += "杠"
                }
            }
            let afterPoint = index > 0 && span.separators[index - 1] == "."
            spoken += afterPoint || group.first == "0" && group.count > 1 || group.count > 16
                ? ChineseNumerals.digitByDigit(group) : ChineseNumerals.cardinal(UInt64(group) ?? 0)
        }
        return Verbalization(spoken)
    }
}
