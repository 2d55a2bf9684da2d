/// What a verbalizer makes of a span.
public struct Verbalization: Sendable, Equatable {
    /// The Chinese words that replace the span (and what it consumed around it).
    public var spoken: String
    /// Scalars before the span that `spoken` replaces (a currency sign).
    public var consumedBefore: Int
    /// Scalars after the span that `spoken` replaces (a unit, `%`).
    public var consumedAfter: Int
    /// Whether a minus sign in front means 负 for this reading (not for dates, times or codes).
    public var takesSign: Bool

    public init(_ spoken: String, consumedBefore: Int = 0, consumedAfter: Int = 0, takesSign: Bool = false) {
        self.spoken = spoken
        self.consumedBefore = consumedBefore
        self.consumedAfter = consumedAfter
        self.takesSign = takesSign
    }
}

/// One category of numbers (money, dates, times …): recognizes its spans and says them.
public protocol Verbalizer: Sendable {
    /// A short name for `bobao normalize --explain` and the tests.
    var category: String { get }
    /// The reading of `span`, or nil when the span is not of this category.
    func verbalize(_ span: NumericSpan, in context: SpanContext) -> Verbalization?
}

/// Words that decide between readings, shared by the verbalizers.
enum Lexicon {
    /// A table of `strings`; the longest match wins.
    static func words(_ strings: [String]) -> WordTable { WordTable(strings) }

    /// Measure words after which 2 is 两 (两个, 两位, 两年) and a number counts something.
    static let measureWords = words([
        "个", "位", "名", "人", "次", "件", "本", "张", "条", "只", "头", "匹", "台", "辆", "架", "艘", "杯", "碗",
        "瓶", "罐", "盒", "包", "袋", "份", "桌", "间", "套", "双", "对", "把", "支", "根", "块", "元", "角", "毛",
        "斤", "吨", "克", "米", "里", "天", "年", "周", "星期", "小时", "分钟", "秒钟", "岁", "倍", "成", "万", "千",
        "百", "亿", "遍", "趟", "口", "声", "页", "篇", "首", "部", "场", "盘", "箱", "颗", "粒", "片", "家", "所",
        "座", "扇", "公斤", "公里", "千克", "升", "毫升", "样", "道", "种", "项", "笔", "单", "晚", "夜", "餐", "枚",
        "副", "顶", "批", "群", "轮", "集", "款",
    ])

    /// Words after which a number is a label or an ordinal, never 两 (二号, 二楼, 二月).
    static let labelWords = words([
        "号", "楼", "层", "月", "日", "路", "期", "届", "章", "课", "栋", "幢", "单元", "室", "排", "区", "站",
        "版", "线", "窗口", "床", "组", "班", "级", "车厢", "通道",
    ])

    /// Words before a number that make it an ordinal or a name of a day (第二, 周二, 星期二, 初二).
    static let ordinalMarkers = words(["第", "初", "周", "星期", "礼拜"])

    static let phoneNumberWord = Word(word: "号码")

    /// Whether the number counts something (两 for 2): a measure word follows, and no ordinal marker
    /// precedes it or label follows it.
    static func counts(_ context: SpanContext) -> Bool {
        if context.preceding(ordinalMarkers) != nil { return false }
        if context.following(labelWords) != nil && !context.followed(by: phoneNumberWord) { return false }
        return context.following(measureWords) != nil
    }
}

extension NumericSpan {
    /// A decimal number: one `.` between two groups, no other separators.
    var decimalParts: (whole: UInt64, fraction: String)? {
        guard separators == ["."], groups[0].count <= 16, let whole = UInt64(groups[0]) else { return nil }
        return (whole, groups[1])
    }

    /// An integer written with thousands separators: `1,280`, `12,345,678`.
    var thousandsValue: UInt64? {
        guard uniformSeparator == ",", groups[0].count <= 3, groups[0].first != "0",
              groups.dropFirst().allSatisfy({ $0.count == 3 }) else { return nil }
        return UInt64(groups.joined())
    }

    /// An amount: a plain integer, an integer with thousands separators, or either with a decimal part.
    var amount: (whole: UInt64, fraction: String)? {
        if let value = integerValue { return (value, "") }
        if let value = thousandsValue { return (value, "") }
        if let parts = decimalParts { return parts }
        // 1,280.50
        guard separators.last == ".", separators.dropLast().allSatisfy({ $0 == "," }), separators.count >= 2 else {
            return nil
        }
        let integerPart = NumericSpan(
            groups: Array(groups.dropLast()), separators: Array(separators.dropLast()), start: 0, end: 0)
        guard let whole = integerPart.thousandsValue else { return nil }
        return (whole, groups.last!)
    }
}
