/// A run of digits with the separators inside it (`128.50`, `2026-11-29`, `13:10:36`, `1,280`, `3/16`),
/// found by `NumericTokenizer`, with the text around it for the verbalizers to look at.
public struct NumericSpan: Sendable, Equatable {
    /// Digit groups and the separators between them: `2026-11-29` → ["2026", "11", "29"], ["-", "-"].
    public var groups: [String]
    public var separators: [Character]
    /// Where the span starts and ends in the line, in Unicode scalars.
    public var start: Int
    public var end: Int

    public var isPlainInteger: Bool { separators.isEmpty }

    /// The whole span as a number when it is a plain integer that fits.
    public var integerValue: UInt64? {
        guard isPlainInteger, groups[0].count <= 16 else { return nil }
        return UInt64(groups[0])
    }

    /// The only separator kind, if every separator is the same character.
    public var uniformSeparator: Character? {
        guard let first = separators.first, separators.allSatisfy({ $0 == first }) else { return nil }
        return first
    }
}

/// Words as scalars, so context checks compare scalars instead of building strings (a 4 KiB line has
/// hundreds of spans, each asked about a dozen words).
public typealias Word = [Unicode.Scalar]

extension Array where Element == Unicode.Scalar {
    init(word: String) { self = Array(word.unicodeScalars) }
}

/// A set of words indexed by their first and last scalar, so asking "does one of these follow?" looks at
/// only the few words that could match.
public struct WordTable: Sendable {
    let byFirst: [Unicode.Scalar: [Word]]
    let byLast: [Unicode.Scalar: [Word]]

    public init(_ strings: [String]) {
        let words = strings.map { Word(word: $0) }.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
        byFirst = Dictionary(grouping: words, by: { $0[0] })
        byLast = Dictionary(grouping: words, by: { $0[$0.count - 1] })
    }
}

/// The line around a span, folded like the span, for context rules.
public struct SpanContext {
    /// Scalars of the whole line, with full-width forms folded to ASCII.
    let folded: [Unicode.Scalar]
    let span: NumericSpan

    /// The scalar just before the span, if any.
    public var previous: Unicode.Scalar? { span.start > 0 ? folded[span.start - 1] : nil }
    /// The scalar just after the span, if any.
    public var next: Unicode.Scalar? { span.end < folded.count ? folded[span.end] : nil }

    /// Whether `word` starts `offset` scalars after the span.
    public func followed(by word: Word, offset: Int = 0) -> Bool {
        let start = span.end + offset
        guard start + word.count <= folded.count else { return false }
        for (index, scalar) in word.enumerated() where folded[start + index] != scalar { return false }
        return true
    }

    /// Whether `word` ends `offset` scalars before the span.
    public func preceded(by word: Word, offset: Int = 0) -> Bool {
        let end = span.start - offset
        guard end - word.count >= 0 else { return false }
        for (index, scalar) in word.enumerated() where folded[end - word.count + index] != scalar { return false }
        return true
    }

    /// The longest of `words` that follows the span (after one space when `spaced`).
    public func following(_ words: WordTable, spaced: Bool = false) -> (word: Word, length: Int)? {
        following(words, offset: spaced && next == " " ? 1 : 0)
    }

    func following(_ words: WordTable, offset: Int) -> (word: Word, length: Int)? {
        let start = span.end + offset
        guard start < folded.count, let candidates = words.byFirst[folded[start]] else { return nil }
        for word in candidates where followed(by: word, offset: offset) { return (word, word.count + offset) }
        return nil
    }

    /// The longest of `words` that ends just before the span (before one space when `spaced`).
    public func preceding(_ words: WordTable, spaced: Bool = false) -> (word: Word, length: Int)? {
        preceding(words, offset: spaced && previous == " " ? 1 : 0)
    }

    func preceding(_ words: WordTable, offset: Int) -> (word: Word, length: Int)? {
        let end = span.start - offset
        guard end > 0, let candidates = words.byLast[folded[end - 1]] else { return nil }
        for word in candidates where preceded(by: word, offset: offset) { return (word, word.count + offset) }
        return nil
    }

    /// Whether one of `words` ends within a few scalars before the span, with only spaces, colons or
    /// 是/为 between (尾号 1234, 电话：010-…, 编号为 7).
    public func cued(by words: WordTable, distance: Int = 3) -> Bool {
        var offset = 0
        while offset < distance, span.start - offset - 1 >= 0, Self.cueGlue.contains(folded[span.start - offset - 1]) {
            offset += 1
        }
        return preceding(words, offset: offset) != nil
    }

    /// What may stand between a cue word and its number.
    static let cueGlue: Set<Unicode.Scalar> = [" ", ":", "是", "为", "\u{3000}"]

    /// Whether one of `words` appears anywhere within `distance` scalars before the span.
    public func mentions(_ words: WordTable, within distance: Int) -> Bool {
        for offset in 0..<distance where span.start - offset > 0 {
            if preceding(words, offset: offset) != nil { return true }
        }
        return false
    }
}

/// Finds numeric spans in a line.
public enum NumericTokenizer {
    /// Full-width digits and number punctuation as their ASCII forms; other scalars unchanged.
    public static func fold(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        switch scalar.value {
        case 0xFF10...0xFF19: return Unicode.Scalar(scalar.value - 0xFF10 + 0x30)!
        case 0xFF0E: return "."
        case 0xFF1A: return ":"
        case 0xFF0F: return "/"
        case 0xFF05: return "%"
        case 0xFF0D, 0x2212, 0x2013: return "-"
        case 0xFF5E, 0x301C: return "~"
        case 0xFF04: return "$"
        case 0xFFE5: return "¥"
        default: return scalar
        }
    }

    static let separators: Set<Unicode.Scalar> = [".", ",", ":", "/", "-", "~"]

    static func isDigit(_ scalar: Unicode.Scalar) -> Bool { scalar.value >= 0x30 && scalar.value <= 0x39 }

    /// All spans of `folded`, left to right. A separator belongs to a span only between two digits.
    public static func spans(in folded: [Unicode.Scalar]) -> [NumericSpan] {
        var spans: [NumericSpan] = []
        var index = 0
        while index < folded.count {
            guard isDigit(folded[index]) else { index += 1; continue }
            let start = index
            var groups: [String] = []
            var separators: [Character] = []
            var group: [UInt8] = []
            while index < folded.count {
                let scalar = folded[index]
                if isDigit(scalar) {
                    group.append(UInt8(scalar.value))
                    index += 1
                } else if separators.count < 4, Self.separators.contains(scalar),
                          index + 1 < folded.count, isDigit(folded[index + 1]) {
                    groups.append(String(decoding: group, as: UTF8.self))
                    group.removeAll(keepingCapacity: true)
                    separators.append(Character(scalar))
                    index += 1
                } else {
                    break
                }
            }
            groups.append(String(decoding: group, as: UTF8.self))
            spans += split(NumericSpan(groups: groups, separators: separators, start: start, end: index))
        }
        return spans
    }

    /// A dash or tilde between numbers of another shape joins two spans, not one number: `8:00-17:00`,
    /// `1.5-2.5`, `3.5~4.5`. Each side becomes a span of its own; the dash stays between them.
    static func split(_ span: NumericSpan) -> [NumericSpan] {
        let isJoiner: (Character) -> Bool = { $0 == "-" || $0 == "~" }
        var result: [NumericSpan] = []
        if span.separators.contains(where: isJoiner) && !span.separators.allSatisfy(isJoiner) {
            var start = span.start, groupStart = 0
            var position = span.start + span.groups[0].unicodeScalars.count
            for (index, separator) in span.separators.enumerated() {
                if isJoiner(separator) {
                    result.append(make(span, groups: groupStart...index, start: start, end: position))
                    start = position + 1
                    groupStart = index + 1
                }
                position += 1 + span.groups[index + 1].unicodeScalars.count
            }
            result.append(make(span, groups: groupStart...(span.groups.count - 1), start: start, end: position))
            return result
        }
        return [span]
    }

    private static func make(_ span: NumericSpan, groups: ClosedRange<Int>, start: Int, end: Int) -> NumericSpan {
        NumericSpan(
            groups: Array(span.groups[groups]), separators: Array(span.separators[groups.lowerBound..<groups.upperBound]),
            start: start, end: end)
    }
}
