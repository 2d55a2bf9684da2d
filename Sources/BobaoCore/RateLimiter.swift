/// Per-peer token buckets: each peer may send `burst` lines at once and `perSecond` lines a second after
/// that. Pure state; the caller passes the time.
public struct RateLimiter: Sendable {
    public let perSecond: Double
    public let burst: Double
    private var buckets: [String: Bucket] = [:]

    private struct Bucket: Sendable {
        var tokens: Double
        var updated: Double
    }

    /// - Parameters:
    ///   - perSecond: sustained lines a second per peer; 0 turns limiting off.
    ///   - burst: lines a peer may send at once.
    public init(perSecond: Double, burst: Double) {
        self.perSecond = perSecond
        self.burst = max(1, burst)
    }

    /// Whether `peer` may send a line at `now` (seconds on a monotonic clock); takes a token if so.
    public mutating func allow(_ peer: String, now: Double) -> Bool {
        guard perSecond > 0 else { return true }
        var bucket = buckets[peer] ?? Bucket(tokens: burst, updated: now)
        bucket.tokens = min(burst, bucket.tokens + (now - bucket.updated) * perSecond)
        bucket.updated = now
        let allowed = bucket.tokens >= 1
        if allowed { bucket.tokens -= 1 }
        buckets[peer] = bucket
        if buckets.count > 10_000 { forgetFull(now: now) }
        return allowed
    }

    /// Drops buckets that have refilled completely: they behave exactly like new ones.
    private mutating func forgetFull(now: Double) {
        buckets = buckets.filter { $0.value.tokens + (now - $0.value.updated) * perSecond < burst }
    }
}
