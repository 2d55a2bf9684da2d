/// Measurements with a unit symbol: `5kg` 五公斤, `2km` 两公里, `36.5°C` 三十六点五摄氏度, `80m²` 八十平方米,
/// `60km/h` 六十公里每小时, `500ml` 五百毫升, `1.5L` 一点五升.
struct UnitVerbalizer: Verbalizer {
    let category = "unit"

    /// Symbol and name, longest symbols first so `km/h` wins over `km` and `m`.
    static let units: [Word: String] = MoneyVerbalizer.table([
        ("km/h", "公里每小时"), ("m/s", "米每秒"), ("kWh", "千瓦时"), ("mAh", "毫安时"), ("°C", "摄氏度"),
        ("°F", "华氏度"), ("km²", "平方公里"), ("m²", "平方米"), ("m2", "平方米"), ("m³", "立方米"), ("m3", "立方米"),
        ("cm", "厘米"), ("mm", "毫米"), ("km", "公里"), ("kg", "公斤"), ("KG", "公斤"), ("Kg", "公斤"), ("mg", "毫克"),
        ("ml", "毫升"), ("mL", "毫升"), ("ML", "毫升"), ("kW", "千瓦"), ("min", "分钟"), ("℃", "摄氏度"),
        ("㎡", "平方米"), ("°", "度"), ("g", "克"), ("m", "米"), ("L", "升"), ("l", "升"), ("h", "小时"),
        ("s", "秒"), ("W", "瓦"), ("V", "伏"), ("t", "吨"),
    ])
    /// Temperatures keep 二 (二摄氏度); other units count (两公斤).
    static let symbols = WordTable(units.keys.map { String(String.UnicodeScalarView($0)) })
    static let temperatures: Set<Word> = Set(["°C", "°F", "℃", "°"].map { Word(word: $0) })

    func verbalize(_ span: NumericSpan, in context: SpanContext) -> Verbalization? {
        guard let amount = span.amount else { return nil }
        let offset = context.next == " " ? 1 : 0
        // Longest symbol first, so km/h wins over km and m.
        let start = context.span.end + offset
        guard start < context.folded.count, let candidates = Self.symbols.byFirst[context.folded[start]] else { return nil }
        for symbol in candidates where context.followed(by: symbol, offset: offset) {
            guard let name = Self.units[symbol] else { continue }
            // The symbol must end there: 5m is 五米, but 5min is minutes and 5mg milligrams (both listed), and
            // 5ms or 5mph (not listed) stay as they are.
            let end = start + symbol.count
            if end < context.folded.count {
                let next = context.folded[end]
                if next.isASCII && (next.properties.isAlphabetic || ("0"..."9").contains(next)) { continue }
            }
            let number = amount.fraction.isEmpty
                ? (Self.temperatures.contains(symbol) ? ChineseNumerals.cardinal(amount.whole) : ChineseNumerals.counting(amount.whole))
                : ChineseNumerals.decimal(whole: amount.whole, fraction: amount.fraction)
            return Verbalization(number + name, consumedAfter: symbol.count + offset, takesSign: true)
        }
        return nil
    }
}
