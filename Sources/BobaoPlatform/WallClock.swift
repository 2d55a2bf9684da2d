#if canImport(Glibc)
import Glibc
#endif

/// Time without Foundation: wall-clock milliseconds for records and logs, monotonic seconds for durations.
public enum WallClock {
    /// Milliseconds since 1970-01-01 UTC.
    public static func nowMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Seconds on a clock that never jumps, for measuring how long something took.
    public static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Seconds since boot, counting time suspended (`CLOCK_BOOTTIME`): never jumps when the wall clock is
    /// set (NTP on a box without a battery clock), so deadlines such as an announcement's TTL use it.
    public static func bootSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Sleeps until `deadline` on `monotonicSeconds()`'s clock (at once if it has passed).
    public static func sleep(untilMonotonic deadline: Double) {
        guard deadline.isFinite, deadline > monotonicSeconds() else { return }
        let whole = deadline.rounded(.down)
        var until = timespec(tv_sec: Int(whole), tv_nsec: Int((deadline - whole) * 1e9))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nil) == EINTR {}
    }

    /// `2026-11-30T03:22:09.123+08:00`: local time with its offset from UTC (`Z` when it is UTC).
    public static func localISO8601(milliseconds: Int64 = nowMilliseconds()) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        let offsetMinutes = Int(parts.tm_gmtoff) / 60
        let sign = offsetMinutes < 0 ? "-" : "+"
        let offset = offsetMinutes == 0
            ? "Z" : "\(sign)\(two(Int32(abs(offsetMinutes) / 60))):\(two(Int32(abs(offsetMinutes) % 60)))"
        return stamp(parts, milliseconds: milliseconds) + offset
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }

    private static func stamp(_ parts: tm, milliseconds: Int64) -> String {
        let fraction = String(milliseconds % 1000 + 1000).dropFirst()
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)"
    }

    /// `2026-11-29T19:22:09.123Z`.
    public static func iso8601(milliseconds: Int64 = nowMilliseconds()) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return stamp(parts, milliseconds: milliseconds) + "Z"
    }
}
