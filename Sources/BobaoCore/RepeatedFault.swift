/// A fault that can go on for a long time, such as a missing sound server retried every 2 s or a full
/// descriptor table on every accept. It is logged as it happens once (or the first few times), then counted
/// and summed up at growing intervals, and its end gets one line:
///
/// ```swift
/// var fault = RepeatedFault("still no sound server", clock: { WallClock.monotonicSeconds() })
/// if let line = fault.occurred("sound server unavailable (Connection refused)") { log(line) }
/// …
/// if let after = fault.resolved() { log("sound server back \(after)") }
/// ```
///
/// The first `logFirst` occurrences come back as they are. After that `occurred` returns nil, except
/// when a summary is due: 1 min after the first, then 10 min, then every hour
/// (`still no sound server: 57 failed attempts in 10 min; last: …`). Summaries are produced only by
/// `occurred`, so a fault that stops happening without `resolved` is not summed up again.
///
/// It is a value with no lock: keep it where its callers' lock already is.
public struct RepeatedFault: Sendable {
    /// Seconds on a clock that never jumps (the origin does not matter).
    public typealias Clock = @Sendable () -> Double

    /// Starts each summary line, e.g. `still no sound server`.
    public let label: String
    /// What one occurrence is called in summaries, singular (`failed attempt`); an `s` makes the plural.
    public let noun: String
    /// How many occurrences in a row are returned as they are.
    public let logFirst: Int
    /// When summaries are due, in seconds after the first occurrence.
    public let summaryDelays: [Double]
    /// After the last of `summaryDelays`, a summary is due every this many seconds.
    public let repeatEvery: Double
    private let clock: Clock

    /// Occurrences since the fault began; 0 while there is none.
    public private(set) var count = 0
    /// The message of the latest occurrence.
    public private(set) var lastMessage = ""
    private var startedAt = 0.0
    private var summariesGiven = 0

    /// - Parameters:
    ///   - label: starts each summary line.
    ///   - noun: what one occurrence is called in summaries and in `resolved`.
    ///   - logFirst: how many occurrences in a row are logged one by one (at least 1).
    ///   - summaryDelays: when summaries are due, in seconds after the first occurrence, ascending.
    ///   - repeatEvery: after the last of those, a summary is due every this many seconds.
    ///   - clock: seconds on a clock that never jumps, such as `WallClock.monotonicSeconds`.
    public init(
        _ label: String, noun: String = "failed attempt", logFirst: Int = 1,
        summaryDelays: [Double] = [60, 600, 3600], repeatEvery: Double = 3600, clock: @escaping Clock
    ) {
        precondition(logFirst >= 1 && !summaryDelays.isEmpty && repeatEvery > 0)
        self.label = label
        self.noun = noun
        self.logFirst = logFirst
        self.summaryDelays = summaryDelays
        self.repeatEvery = repeatEvery
        self.clock = clock
    }

    /// Whether the fault is going on (it has occurred and not been resolved since).
    public var isActive: Bool { count > 0 }

    /// Counts one occurrence. Returns the line to log now: `message` itself for the first `logFirst`
    /// occurrences, a summary when one is due, nil otherwise.
    public mutating func occurred(_ message: String) -> String? {
        let now = clock()
        if count == 0 { startedAt = now }
        count += 1
        lastMessage = message
        if count <= logFirst { return message }
        let elapsed = now - startedAt
        guard elapsed >= nextSummaryDelay else { return nil }
        while elapsed >= nextSummaryDelay { summariesGiven += 1 }  // one summary, however many were due
        return "\(label): \(counted(count)) in \(Self.describe(seconds: elapsed)); last: \(message)"
    }

    /// The fault is over. Returns how long it lasted, e.g. `after 57 failed attempts in 10 min 3 s`, or
    /// nil if it was not going on.
    public mutating func resolved() -> String? {
        guard count > 0 else { return nil }
        let line = "after \(counted(count)) in \(Self.describe(seconds: clock() - startedAt))"
        count = 0
        summariesGiven = 0
        lastMessage = ""
        return line
    }

    /// Seconds after the start when the next summary is due.
    private var nextSummaryDelay: Double {
        if summariesGiven < summaryDelays.count { return summaryDelays[summariesGiven] }
        return summaryDelays[summaryDelays.count - 1] + Double(summariesGiven - summaryDelays.count + 1) * repeatEvery
    }

    private func counted(_ number: Int) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }

    /// `0.4 s`, `12 s`, `1 min 2 s`, `2 h 5 min`.
    public static func describe(seconds: Double) -> String {
        let tenths = Int((seconds * 10).rounded())
        if tenths < 100 { return "\(tenths / 10).\(tenths % 10) s" }
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole) s" }
        if whole < 3600 { return whole % 60 == 0 ? "\(whole / 60) min" : "\(whole / 60) min \(whole % 60) s" }
        let minutes = whole / 60
        return minutes % 60 == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h \(minutes % 60) min"
    }
}
