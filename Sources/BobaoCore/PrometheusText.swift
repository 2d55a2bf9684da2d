/// Prometheus's text exposition format, version 0.0.4 (`GET /metrics`): each metric family's `# HELP` and
/// `# TYPE` lines, then its samples, `name{label="value"} 1`. Label values escape `\`, `"` and newlines;
/// help texts `\` and newlines.
public struct PrometheusText: Sendable {
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    /// The exposition so far.
    public private(set) var text = ""

    public init() {}

    /// Begins a metric family: its `# HELP` and `# TYPE` lines. Its samples follow (`sample`).
    public mutating func family(_ name: String, _ kind: Kind, help: String) {
        text += "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample: `name{labels} value`.
    public mutating func sample(_ name: String, _ labels: KeyValuePairs<String, String> = [:], value: Double) {
        sample(name, labels: labels.map { ($0.key, $0.value) }, value: value)
    }

    /// One sample, its labels in this order.
    public mutating func sample(_ name: String, labels: [(String, String)], value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " " + Self.format(value) + "\n"
    }

    /// A whole histogram family: `_bucket{le="…"}` (cumulative, ending with `+Inf`), `_sum` and `_count`.
    public mutating func histogram(_ name: String, help: String, _ histogram: Histogram) {
        family(name, .histogram, help: help)
        var cumulative: UInt64 = 0
        for (bound, count) in zip(histogram.bounds, histogram.bucketCounts) {
            cumulative += count
            sample(name + "_bucket", ["le": Self.format(bound)], value: Double(cumulative))
        }
        sample(name + "_bucket", ["le": "+Inf"], value: Double(histogram.count))
        sample(name + "_sum", value: histogram.sum)
        sample(name + "_count", value: Double(histogram.count))
    }

    /// A label value: `\` → `\\`, `"` → `\"`, a newline → `\n`.
    public static func escapeLabel(_ value: String) -> String { escape(value, quotes: true) }

    /// A help text: `\` → `\\`, a newline → `\n`.
    public static func escapeHelp(_ value: String) -> String { escape(value, quotes: false) }

    private static func escape(_ value: String, quotes: Bool) -> String {
        var out = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": out += "\\\\"
            case "\"" where quotes: out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// `3` for whole numbers, `0.25`, `+Inf`, `-Inf`, `NaN`.
    public static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}

/// Observations counted in buckets by upper bound, for a Prometheus histogram.
public struct Histogram: Sendable, Equatable {
    /// Upper bounds, ascending (`+Inf` is implied).
    public let bounds: [Double]
    /// Observations per bucket (not cumulative): those above the previous bound, up to and including this one.
    public private(set) var bucketCounts: [UInt64]
    public private(set) var sum: Double = 0
    public private(set) var count: UInt64 = 0

    public init(bounds: [Double]) {
        self.bounds = bounds.sorted()
        bucketCounts = Array(repeating: 0, count: bounds.count)
    }

    /// Counts `value` (a NaN is ignored).
    public mutating func observe(_ value: Double) {
        guard !value.isNaN else { return }
        if let index = bounds.firstIndex(where: { value <= $0 }) { bucketCounts[index] += 1 }
        sum += value
        count += 1
    }
}
