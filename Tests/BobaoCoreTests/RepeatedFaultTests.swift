import BobaoCore
import Synchronization
import Testing

struct RepeatedFaultTests {
    /// A clock the test moves by hand.
    final class ManualClock: Sendable {
        private let seconds = Mutex(1000.0)
        var now: Double { seconds.withLock { $0 } }
        func advance(_ by: Double) { seconds.withLock { $0 += by } }
    }

    /// Occurrences every 2 s for `duration` seconds; returns the lines to log.
    static func occur(_ fault: inout RepeatedFault, every step: Double = 2, for duration: Double, clock: ManualClock) -> [String] {
        var lines: [String] = []
        var elapsed = 0.0
        while elapsed < duration {
            if let line = fault.occurred("refused (attempt at \(Int(clock.now)))") { lines.append(line) }
            clock.advance(step)
            elapsed += step
        }
        return lines
    }

    @Test func theFirstIsLoggedThenSummariesAtOneMinuteTenMinutesAndHourly() {
        let clock = ManualClock()
        var fault = RepeatedFault("still no sound server", clock: { clock.now })
        let lines = Self.occur(&fault, for: 3 * 3600 + 10, clock: clock)
        #expect(lines.count == 1 + 5, "\(lines)")  // 1 min, 10 min, 1 h, 2 h, 3 h
        #expect(lines[0] == "refused (attempt at 1000)")
        #expect(lines[1] == "still no sound server: 31 failed attempts in 1 min; last: refused (attempt at 1060)")
        #expect(lines[2].hasPrefix("still no sound server: 301 failed attempts in 10 min; last:"))
        #expect(lines[3].hasPrefix("still no sound server: 1801 failed attempts in 1 h; last:"))
        #expect(lines[5].hasPrefix("still no sound server: 5401 failed attempts in 3 h; last:"))
        #expect(fault.isActive && fault.count == 5405)
    }

    @Test func theFirstFewCanBeLoggedOneByOne() {
        let clock = ManualClock()
        var fault = RepeatedFault("still failing", logFirst: 3, clock: { clock.now })
        let lines = Self.occur(&fault, every: 0.1, for: 1, clock: clock)
        #expect(lines.count == 3)
    }

    @Test func resolvingSaysHowLongItLastedAndStartsAfresh() {
        let clock = ManualClock()
        var fault = RepeatedFault("still failing", noun: "failure", clock: { clock.now })
        #expect(fault.resolved() == nil, "nothing to resolve")
        _ = Self.occur(&fault, for: 62, clock: clock)
        #expect(fault.resolved() == "after 31 failures in 1 min 2 s")
        #expect(!fault.isActive)
        #expect(fault.occurred("again") == "again", "a new episode is logged again")
        #expect(fault.resolved() == "after 1 failure in 0.0 s")
    }

    @Test func aLongQuietSpellGivesOneSummaryNotACatchUp() {
        let clock = ManualClock()
        var fault = RepeatedFault("still failing", clock: { clock.now })
        _ = fault.occurred("first")
        clock.advance(7200)
        #expect(fault.occurred("much later") == "still failing: 2 failed attempts in 2 h; last: much later")
        clock.advance(1)
        #expect(fault.occurred("next") == nil)
    }

    @Test(arguments: [(0.44, "0.4 s"), (9.96, "10 s"), (59.4, "59 s"), (60, "1 min"), (62, "1 min 2 s"), (7260, "2 h 1 min")])
    func durationsReadPlainly(seconds: Double, text: String) {
        #expect(RepeatedFault.describe(seconds: seconds) == text)
    }
}
