/// An announcement Bobao has accepted.
public struct Announcement: Sendable, Equatable {
    public var id: UInt64
    public var text: String
    /// When it was accepted, in milliseconds since 1970 (UTC): for logs and records only, never for expiry
    /// (the wall clock jumps).
    public var acceptedAt: Int64
    /// When it expires, in seconds on the boot clock (`WallClock.bootSeconds()`, which never jumps);
    /// `.infinity` for never.
    public var expiresAt: Double
    /// Priority, repeat, chime, voice and the rest, as the client asked (defaults for a plain line).
    public var options: MessageOptions

    public init(
        id: UInt64, text: String, acceptedAt: Int64 = 0, expiresAt: Double = .infinity,
        options: MessageOptions = MessageOptions()
    ) {
        self.id = id
        self.text = text
        self.acceptedAt = acceptedAt
        self.expiresAt = expiresAt
        self.options = options
    }

    public var priority: Priority { options.priority }
}

/// The announcements waiting to be spoken, bounded, in three lanes: `urgent` first, then `normal`, then
/// `low`, each first in, first out. Pure state; the server wraps it in a lock and a condition.
public struct AnnouncementQueue: Sendable {
    public let capacity: Int
    private var lanes = [Lane](repeating: Lane(), count: Priority.allCases.count)
    private var nextID: UInt64

    public init(capacity: Int = 256, firstID: UInt64 = 1) {
        precondition(capacity > 0)
        self.capacity = capacity
        nextID = firstID
    }

    public var count: Int { lanes.reduce(0) { $0 + $1.count } }

    public func count(of priority: Priority) -> Int { lanes[priority.rank].count }

    public var isEmpty: Bool { count == 0 }

    /// The id the next accepted announcement will get.
    public var nextAnnouncementID: UInt64 { nextID }

    /// Puts back announcements kept from an earlier run, oldest first, whatever the capacity (they were
    /// accepted then); new ids continue after theirs. Restored low ones are not dropped by restored others.
    public mutating func restore(_ announcements: [Announcement]) {
        for announcement in announcements {
            lanes[announcement.priority.rank].append(announcement)
            if announcement.id < UInt64.max { nextID = max(nextID, announcement.id + 1) }
        }
    }

    /// Gives out the next id without queueing anything (for an announcement that is queued with `append`
    /// once it is stored).
    public mutating func takeNextID() -> UInt64 {
        defer { if nextID < UInt64.max { nextID += 1 } }
        return nextID
    }

    /// Queues an announcement whose id came from `takeNextID`, whatever the capacity: its place was
    /// counted when the id was taken. A normal or urgent one drops every low one waiting, which it returns.
    @discardableResult
    public mutating func append(_ announcement: Announcement) -> [Announcement] {
        let dropped = announcement.priority == .low ? [] : lanes[Priority.low.rank].removeAll()
        lanes[announcement.priority.rank].append(announcement)
        return dropped
    }

    public enum Refusal: Error, Equatable {
        case full(capacity: Int)
    }

    /// Accepts `text` and gives it the next id, or refuses it when the queue is full: never a silent drop.
    public mutating func enqueue(
        _ text: String, at date: Int64 = 0, expiresAt: Double = .infinity, options: MessageOptions = MessageOptions()
    ) throws(Refusal) -> Announcement {
        guard count < capacity else { throw .full(capacity: capacity) }
        let announcement = Announcement(
            id: takeNextID(), text: text, acceptedAt: date, expiresAt: expiresAt, options: options)
        append(announcement)
        return announcement
    }

    /// Puts an announcement back at the front of its lane, as when its playback was cut and it must be said
    /// again.
    public mutating func requeueFirst(_ announcement: Announcement) {
        lanes[announcement.priority.rank].prepend(announcement)
    }

    /// Takes the next announcement: the oldest urgent one, else the oldest normal one, else the oldest low one.
    public mutating func dequeue() -> Announcement? {
        for rank in lanes.indices {
            if let announcement = lanes[rank].popFirst() { return announcement }
        }
        return nil
    }

    /// The next announcement `dequeue` would give, left in place.
    public var first: Announcement? { lanes.lazy.compactMap(\.first).first }

    /// Takes out every waiting announcement that `matches`, in the order they would have been spoken.
    public mutating func remove(where matches: (Announcement) -> Bool) -> [Announcement] {
        lanes.indices.flatMap { lanes[$0].remove(where: matches) }
    }

    /// Takes out everything waiting, in the order it would have been spoken.
    public mutating func removeAll() -> [Announcement] {
        lanes.indices.flatMap { lanes[$0].removeAll() }
    }

    /// Everything still waiting, in the order it would be spoken.
    public var waiting: [Announcement] { lanes.flatMap(\.items) }

    /// Whether announcement `id` is waiting (without copying the queue).
    public func contains(_ id: UInt64) -> Bool { lanes.contains { $0.items.contains { $0.id == id } } }
}

/// One priority's announcements, oldest first: an array read from `head`, compacted now and then.
private struct Lane: Sendable {
    private var storage: [Announcement] = []
    private var head = 0

    var count: Int { storage.count - head }
    var first: Announcement? { head < storage.count ? storage[head] : nil }
    var items: ArraySlice<Announcement> { storage[head...] }

    mutating func append(_ announcement: Announcement) {
        storage.append(announcement)
    }

    mutating func prepend(_ announcement: Announcement) {
        if head > 0 {
            head -= 1
            storage[head] = announcement
        } else {
            storage.insert(announcement, at: 0)
        }
    }

    mutating func popFirst() -> Announcement? {
        guard head < storage.count else { return nil }
        let announcement = storage[head]
        head += 1
        if head > 64 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return announcement
    }

    mutating func remove(where matches: (Announcement) -> Bool) -> [Announcement] {
        let removed = storage[head...].filter(matches)
        guard !removed.isEmpty else { return [] }
        storage = storage[head...].filter { !matches($0) }
        head = 0
        return removed
    }

    mutating func removeAll() -> [Announcement] {
        defer {
            storage.removeAll()
            head = 0
        }
        return Array(storage[head...])
    }
}
