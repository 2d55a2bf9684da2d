/// The client keys (`"id"`) accepted in the last 10 minutes, so a client that retries gets
/// `OK <n> duplicate` instead of hearing its message twice. Times are on the boot clock. Bounded: past
/// `limit` keys the oldest are forgotten first.
public struct ClientKeys: Sendable {
    public struct Entry: Sendable, Equatable {
        /// The number the key's message was given.
        public var number: UInt64
        public var acceptedAt: Double
        /// How it ended, once it has (nil while it waits or speaks, or when a restart lost the outcome).
        public var outcome: AnnouncementEvent?

        public init(number: UInt64, acceptedAt: Double, outcome: AnnouncementEvent? = nil) {
            self.number = number
            self.acceptedAt = acceptedAt
            self.outcome = outcome
        }
    }

    public let windowSeconds: Double
    public let limit: Int
    private var entries: [String: Entry] = [:]
    /// Keys in the order they were accepted, from `head` on, for forgetting the oldest.
    private var order: [(key: String, acceptedAt: Double)] = []
    private var head = 0

    public init(windowSeconds: Double = MessageOptions.duplicateWindowSeconds, limit: Int = 100_000) {
        self.windowSeconds = windowSeconds
        self.limit = limit
    }

    public var count: Int { entries.count }

    /// The message `key` was accepted for within the window, if any.
    public mutating func lookup(_ key: String, now: Double) -> Entry? {
        forget(before: now - windowSeconds)
        guard let entry = entries[key], now - entry.acceptedAt < windowSeconds else { return nil }
        return entry
    }

    public mutating func remember(_ key: String, number: UInt64, acceptedAt: Double, outcome: AnnouncementEvent? = nil) {
        entries[key] = Entry(number: number, acceptedAt: acceptedAt, outcome: outcome)
        order.append((key, acceptedAt))
        while entries.count > limit, head < order.count {
            let oldest = order[head]
            head += 1
            if entries[oldest.key]?.acceptedAt == oldest.acceptedAt { entries[oldest.key] = nil }
        }
        compact()
    }

    /// Forgets `key` if it still names `number` (its message was refused after all, so a retry must be heard).
    public mutating func forget(_ key: String, number: UInt64) {
        if entries[key]?.number == number { entries[key] = nil }
    }

    /// Records how the message with `number` under `key` ended.
    public mutating func settle(_ key: String, number: UInt64, outcome: AnnouncementEvent) {
        guard entries[key]?.number == number else { return }
        entries[key]?.outcome = outcome
    }

    private mutating func forget(before cutoff: Double) {
        while head < order.count, order[head].acceptedAt <= cutoff {
            let oldest = order[head]
            head += 1
            if entries[oldest.key]?.acceptedAt == oldest.acceptedAt { entries[oldest.key] = nil }
        }
        compact()
    }

    private mutating func compact() {
        if head > 1024 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
