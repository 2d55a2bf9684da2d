/// What the server remembers about each client address across its connections: the rate limit, and which
/// refusals have already been logged. Pure state; the caller passes the time and writes out `takeLog()`.
///
/// Logging is per address, not per connection, so a client that reconnects for every bad line cannot
/// flood the log: the first refusal of each kind from an address is logged, the rest are counted and
/// summed up in one line once the address's summary window (`summaryInterval`) has passed.
public struct PeerLedger: Sendable {
    public var rateLimiter: RateLimiter
    /// Whether loopback clients are rate-limited too (off by default: the box's own software).
    public var rateLimitLoopback: Bool
    public let summaryInterval: Double
    /// Addresses tracked at most; beyond it, refusals from new addresses are counted together.
    public let maximumTrackedAddresses: Int
    /// Told the code of every refusal and other noted event (`note`), logged or not: the metrics' count.
    public var refusalTap: (@Sendable (String) -> Void)?
    private var windows: [String: Window] = [:]
    private var untracked = Window(opened: 0)
    private var log: [String] = []

    private struct Window: Sendable {
        var opened: Double
        /// Refusals by code in this window, including the logged first of each.
        var counts: [String: Int] = [:]
    }

    public init(
        rateLimiter: RateLimiter, rateLimitLoopback: Bool = false, summaryInterval: Double = 60,
        maximumTrackedAddresses: Int = 4096, refusalTap: (@Sendable (String) -> Void)? = nil
    ) {
        self.refusalTap = refusalTap
        self.rateLimiter = rateLimiter
        self.rateLimitLoopback = rateLimitLoopback
        self.summaryInterval = summaryInterval
        self.maximumTrackedAddresses = maximumTrackedAddresses
    }

    /// Whether a line from `host` is within its rate; takes a token if so.
    public mutating func allowLine(from host: String, isLoopback: Bool, now: Double) -> Bool {
        if isLoopback && !rateLimitLoopback { return true }
        return rateLimiter.allow(host, now: now)
    }

    /// Records a refusal of `what` (a line, a connection) from `peer` (`host:port`) at `host`; logs it if it
    /// is the first of its code from that address in the current window.
    public mutating func refused(_ refusal: LineProtocol.Refusal, what: String, peer: String, host: String, now: Double) {
        note(code: refusal.code, host: host, now: now) {
            "refused \(what) from \(peer): \(refusal.code) (\(refusal.reason))"
        }
    }

    /// Records an event that is logged once per address per window and counted after that (a connection
    /// closed for idleness, say).
    public mutating func note(code: String, host: String, now: Double, message: () -> String) {
        refusalTap?(code)
        if windows[host] == nil && windows.count >= maximumTrackedAddresses {
            flushSummaries(now: now)
        }
        guard windows[host] != nil || windows.count < maximumTrackedAddresses else {
            if untracked.counts.isEmpty { untracked.opened = now }
            untracked.counts[code, default: 0] += 1
            return
        }
        if let window = windows[host], now - window.opened >= summaryInterval {
            summarize(host, window)
            windows[host] = nil
        }
        var window = windows[host] ?? Window(opened: now)
        window.counts[code, default: 0] += 1
        if window.counts[code] == 1 { log.append(message()) }
        windows[host] = window
    }

    /// Summarizes and forgets the windows that have closed. Call about once a second.
    public mutating func flushSummaries(now: Double) {
        for (host, window) in windows where now - window.opened >= summaryInterval {
            summarize(host, window)
            windows[host] = nil
        }
        if !untracked.counts.isEmpty && now - untracked.opened >= summaryInterval {
            let summary = untracked.counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            log.append("refused from other addresses (more than \(maximumTrackedAddresses) at once), not logged one by one: \(summary)")
            untracked = Window(opened: now)
        }
    }

    /// Log lines written since the last call, oldest first.
    public mutating func takeLog() -> [String] {
        defer { log.removeAll(keepingCapacity: true) }
        return log
    }

    /// How many addresses have an open window (for tests of the bound).
    public var trackedAddresses: Int { windows.count }

    private mutating func summarize(_ host: String, _ window: Window) {
        let repeated = window.counts.filter { $0.value > 1 }.sorted { $0.key < $1.key }
        guard !repeated.isEmpty else { return }
        let summary = repeated.map { "\($0.value - 1) more \($0.key)" }.joined(separator: ", ")
        log.append("refused from \(host), not logged one by one: \(summary)")
    }
}
