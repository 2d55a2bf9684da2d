/// Numbers that are names, not amounts, read digit by digit: mobile numbers (11 digits from 1), phone
/// numbers with an area code or hotline dashes, numbers after 尾号/手机/电话/编号 and the like, codes with a
/// leading zero, letters in front (`A012号`), and digit strings too long to count.
///
/// Phone numbers say 幺 for 1, as people read them aloud; codes say 一.
struct DigitStringVerbalizer: Verbalizer {
    let category = "digits"

    static let phoneCues = Lexicon.words([
        "尾号", "手机", "电话", "号码", "热线", "客服", "致电", "拨打", "联系方式", "手机号", "Tel", "TEL", "tel",
    ])
    static let codeCues = Lexicon.words([
        "编号", "单号", "订单", "卡号", "工号", "验证码", "密码", "车牌", "房间", "账号", "学号", "身份证", "取件码",
        "取餐码", "取货码", "批号", "序号", "代码", "No.", "NO.", "no.", "#",
    ])

    /// Room numbers are read digit by digit: 501室 五零一室.
    static let roomWords = Lexicon.words(["室", "房", "房间"])

    func verbalize(_ span: NumericSpan, in context: SpanContext) -> Verbalization? {
        let digitCount = span.groups.reduce(0) { $0 + $1.utf8.count }
        let leadingZero = span.groups[0].utf8.first == UInt8(ascii: "0")
        let allDigitGroups = span.separators.allSatisfy { $0 == "-" || $0 == " " }
        // Mobile: 13812345678 or 138-1234-5678.
        if allDigitGroups, digitCount == 11, span.groups[0].utf8.first == UInt8(ascii: "1"), span.groups.count <= 3 {
            return phone(span)
        }
        // Landline with area code (010-12345678, 0755-88888888) and hotlines (400-820-8820).
        if span.uniformSeparator == "-", span.groups.count >= 2, span.groups.count <= 3,
           span.groups.allSatisfy({ $0.utf8.count >= 3 }), digitCount >= 10 || leadingZero {
            return phone(span)
        }
        if context.cued(by: Self.phoneCues) && (span.isPlainInteger || allDigitGroups) { return phone(span) }
        if context.cued(by: Self.codeCues) && (span.isPlainInteger || allDigitGroups) { return code(span) }
        guard span.isPlainInteger else { return nil }
        if span.groups[0].utf8.count >= 3, context.following(Self.roomWords) != nil { return code(span) }
        // Letters right before the digits make a code: A012, B3, K1234.
        if let previous = context.previous, previous.isASCII, previous.properties.isAlphabetic { return code(span) }
        // A leading zero is never counted: 007, 0123.
        if digitCount >= 2 && leadingZero { return code(span) }
        if digitCount > 16 { return code(span) }
        return nil
    }

    private func phone(_ span: NumericSpan) -> Verbalization {
        Verbalization(span.groups.map { ChineseNumerals.digitByDigit($0, phoneStyle: true) }.joined(separator: " "))
    }

    private func code(_ span: NumericSpan) -> Verbalization {
        Verbalization(span.groups.map { ChineseNumerals.digitByDigit($0) }.joined(separator: " "))
    }
}
