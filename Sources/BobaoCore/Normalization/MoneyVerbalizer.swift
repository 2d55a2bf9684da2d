/// Money: a currency sign or code before the amount, or a currency word after it.
///
/// `¥1,280.00` 一千二百八十元, `128.50元` 一百二十八点五元, `$5` 五美元, `HK$100` 一百港元, `2元` 两元.
/// Zeros after the point are not said: 128.50 is 一百二十八点五.
struct MoneyVerbalizer: Verbalizer {
    let category = "money"

    /// Signs and codes written before the amount, and the word said after it.
    static let prefixes = table([
        ("HK$", "港元"), ("US$", "美元"), ("NT$", "新台币"), ("RMB", "元"), ("CNY", "元"), ("USD", "美元"),
        ("HKD", "港元"), ("EUR", "欧元"), ("GBP", "英镑"), ("JPY", "日元"), ("¥", "元"), ("$", "美元"),
        ("€", "欧元"), ("£", "英镑"),
    ])
    /// Codes written after the amount.
    static let suffixCodes = table([
        ("RMB", "元"), ("CNY", "元"), ("USD", "美元"), ("HKD", "港元"), ("EUR", "欧元"), ("GBP", "英镑"),
        ("JPY", "日元"),
    ])
    /// Currency words that stay as written after the amount.
    static let currencyWords = Lexicon.words(["元", "块", "圆", "美元", "美金", "港元", "港币", "欧元", "英镑", "日元", "韩元", "角", "毛"])

    static let prefixWords = WordTable(prefixes.map { String(String.UnicodeScalarView($0.0)) })
    static let suffixCodeWords = WordTable(suffixCodes.map { String(String.UnicodeScalarView($0.0)) })

    static func table(_ pairs: [(String, String)]) -> [Word: String] {
        Dictionary(pairs.map { (Word(word: $0.0), $0.1) }, uniquingKeysWith: { first, _ in first })
    }

    func verbalize(_ span: NumericSpan, in context: SpanContext) -> Verbalization? {
        guard let amount = span.amount else { return nil }
        if let (sign, length) = context.preceding(Self.prefixWords, spaced: true),
           let word = Self.prefixes[sign] {
            // A letter code must stand alone, not end a longer word.
            let before = context.span.start - length - 1
            let glued = sign[0].properties.isAlphabetic && before >= 0 && context.folded[before].properties.isAlphabetic
            if !glued {
                return Verbalization(Self.say(amount) + word, consumedBefore: length, takesSign: true)
            }
        }
        if let (code, length) = context.following(Self.suffixCodeWords, spaced: true),
           let word = Self.suffixCodes[code] {
            let after = context.span.end + length
            if after >= context.folded.count || !context.folded[after].properties.isAlphabetic {
                return Verbalization(Self.say(amount) + word, consumedAfter: length, takesSign: true)
            }
        }
        if context.following(Self.currencyWords) != nil {
            return Verbalization(Self.say(amount), takesSign: true)
        }
        return nil
    }

    /// An amount of money: 两 for exactly 2, no trailing zeros after the point.
    static func say(_ amount: (whole: UInt64, fraction: String)) -> String {
        let fraction = amount.fraction.reversed().drop { $0 == "0" }.reversed()
        if fraction.isEmpty { return ChineseNumerals.counting(amount.whole) }
        return ChineseNumerals.decimal(whole: amount.whole, fraction: String(fraction))
    }
}
