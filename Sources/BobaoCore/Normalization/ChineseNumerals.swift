/// How Mandarin says numbers: the building blocks every verbalizer shares.
///
/// Conventions (chosen once, used everywhere):
/// - 零 marks skipped places inside a number (1001 一千零一, 20500 两万零五百), never at its end;
/// - 10–19 start with 十, not 一十 (15 十五), but inside a larger number the 一 stays (115 一百一十五);
/// - a leading 2 before 百, 千, 万 or 亿 is 两 (200 两百, 2000 两千, 20500 两万零五百); 2, 12, 20 keep 二;
/// - groups of four: 万 (10⁴), 亿 (10⁸), 万亿 (10¹²).
public enum ChineseNumerals {
    public static let digits: [Character] = ["零", "一", "二", "三", "四", "五", "六", "七", "八", "九"]

    /// Digit by digit: "2026" → 二零二六; with `phoneStyle`, 1 is 幺 (as read in phone numbers).
    public static func digitByDigit(_ digitString: some Sequence<Character>, phoneStyle: Bool = false) -> String {
        var out = ""
        for character in digitString {
            guard let value = character.wholeNumberValue, (0...9).contains(value) else { continue }
            out.append(phoneStyle && value == 1 ? "幺" : digits[value])
        }
        return out
    }

    /// The largest value `cardinal` reads as a number; longer digit strings are read digit by digit.
    public static let maximumCardinal: UInt64 = 9_999_999_999_999_999

    /// A whole number the way it is counted: 1001 一千零一, 100000 十万.
    public static func cardinal(_ value: UInt64) -> String {
        if value == 0 { return "零" }
        let groupNames = ["", "万", "亿", "万亿"]
        var groups: [Int] = []
        var rest = value
        while rest > 0 {
            groups.append(Int(rest % 10_000))
            rest /= 10_000
        }
        var out = ""
        var pendingZero = false
        for index in stride(from: groups.count - 1, through: 0, by: -1) {
            let group = groups[index]
            if group == 0 {
                pendingZero = !out.isEmpty
                continue
            }
            // A group under 1000 after a higher group skips its leading places: 零.
            if !out.isEmpty && (pendingZero || group < 1000) { out += "零" }
            pendingZero = false
            // 2 alone before 万 or 亿 at the start: 两万, 两亿.
            out += group == 2 && index > 0 && out.isEmpty ? "两" : smallGroup(group, leading: out.isEmpty)
            out += groupNames[index]
        }
        return out
    }

    /// 1…9999, with `leading` when nothing comes before it in the number.
    static func smallGroup(_ value: Int, leading: Bool) -> String {
        let places: [(Int, String)] = [(1000, "千"), (100, "百"), (10, "十"), (1, "")]
        var out = ""
        var zero = false
        var started = false
        for (size, name) in places {
            let digit = value / size % 10
            if digit == 0 {
                if started { zero = true }
                continue
            }
            if zero { out += "零"; zero = false }
            if size == 10 && digit == 1 && !started && leading {
                out += "十"  // 10–19 at the start of a number: 十, 十五
            } else if digit == 2 && size >= 100 && !started && leading {
                out += "两" + name
            } else {
                out += String(digits[digit]) + name
            }
            started = true
        }
        return out
    }

    /// A number that counts something before a measure word: 2 is 两 (两个, 两位); others as `cardinal`.
    public static func counting(_ value: UInt64) -> String {
        value == 2 ? "两" : cardinal(value)
    }

    /// A decimal: the whole part counted, the fraction digit by digit (6.42 六点四二, 0.5 零点五).
    /// Trailing zeros of the fraction are kept unless `dropTrailingZeros`.
    public static func decimal(whole: UInt64, fraction: String, dropTrailingZeros: Bool = false) -> String {
        var fraction = Substring(fraction)
        if dropTrailingZeros {
            while fraction.last == "0" { fraction = fraction.dropLast() }
        }
        return fraction.isEmpty ? cardinal(whole) : cardinal(whole) + "点" + digitByDigit(fraction)
    }
}
