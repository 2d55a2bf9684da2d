import Glibc

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
}

/// The announcements waiting to be spoken: first in, first out, bounded. Pure state; the server wraps it
/// in a lock and a condition.
public struct AnnouncementQueue: Sendable {
    public let capacity: Int
    private var items: [Announcement] = []
    private var head = 0
    private var nextID: UInt64

    public init(capacity: Int = 256, firstID: UInt64 = 1) {
        precondition(capacity > 0)
        self.capacity = capacity
        nextID = firstID
    }

    public var count: Int { items.count - head }

    /// The id the next accepted announcement will get.
    public var nextAnnouncementID: UInt64 { nextID }

    /// Puts back announcements kept from an earlier run, oldest first, whatever the capacity (they were
    /// accepted then); new ids continue after theirs.
    public mutating func restore(_ announcements: [Announcement]) {
        for announcement in announcements {
            items.append(announcement)
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
    /// counted when the id was taken.
    public mutating func append(_ announcement: Announcement) {
        items.append(announcement)
    }

    public var isEmpty: Bool { count == 0 }

    public enum Refusal: Error, Equatable {
        case full(capacity: Int)
    }

    /// Accepts `text` and gives it the next id, or refuses it when the queue is full: never a silent drop.
    public mutating func enqueue(
        _ text: String, at date: Int64 = 0, expiresAt: Double = .infinity
    ) throws(Refusal) -> Announcement {
        guard count < capacity else { throw .full(capacity: capacity) }
        let announcement = Announcement(id: takeNextID(), text: text, acceptedAt: date, expiresAt: expiresAt)
        items.append(announcement)
        return announcement
    }

    /// Puts an announcement back at the front, as when its playback was cut and it must be said again.
    public mutating func requeueFirst(_ announcement: Announcement) {
        if head > 0 {
            head -= 1
            items[head] = announcement
        } else {
            items.insert(announcement, at: 0)
        }
    }

    /// Takes the oldest announcement.
    public mutating func dequeue() -> Announcement? {
        guard head < items.count else { return nil }
        let announcement = items[head]
        head += 1
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return announcement
    }

    /// Everything still waiting, oldest first.
    public var waiting: [Announcement] { Array(items[head...]) }
}
