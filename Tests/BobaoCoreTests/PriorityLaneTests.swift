import BobaoCore
import Testing

/// The queue's three lanes: urgent before normal before low, each first in, first out.
struct PriorityLaneTests {
    private func options(_ priority: Priority, key: String? = nil) -> MessageOptions {
        var options = MessageOptions()
        options.priority = priority
        options.clientID = key
        return options
    }

    @Test func urgentGoesFirstAndEachLaneKeepsItsOrder() throws {
        var queue = AnnouncementQueue(capacity: 16)
        for (text, priority) in [("n1", Priority.normal), ("u1", .urgent), ("n2", .normal), ("u2", .urgent)] {
            _ = try queue.enqueue(text, options: options(priority))
        }
        var order: [String] = []
        while let next = queue.dequeue() { order.append(next.text) }
        #expect(order == ["u1", "u2", "n1", "n2"])
    }

    @Test func lowWaitsForEverythingElseAndIsDroppedByNewerWork() throws {
        var queue = AnnouncementQueue(capacity: 16)
        _ = try queue.enqueue("l1", options: options(.low))
        _ = try queue.enqueue("l2", options: options(.low))
        #expect(queue.count(of: .low) == 2)
        let normal = Announcement(id: queue.takeNextID(), text: "n", options: options(.normal))
        let dropped = queue.append(normal)
        #expect(dropped.map(\.text) == ["l1", "l2"])
        #expect(queue.waiting.map(\.text) == ["n"])
        // A low one arriving after does not drop anything, and is spoken last.
        #expect(queue.append(Announcement(id: queue.takeNextID(), text: "l3", options: options(.low))).isEmpty)
        #expect(queue.dequeue()?.text == "n")
        #expect(queue.dequeue()?.text == "l3")
    }

    @Test func aCutAnnouncementGoesBackToTheFrontOfItsOwnLane() throws {
        var queue = AnnouncementQueue(capacity: 16)
        let cut = try queue.enqueue("long", options: options(.normal))
        _ = try queue.enqueue("next", options: options(.normal))
        #expect(queue.dequeue() == cut)
        _ = try queue.enqueue("urgent", options: options(.urgent))
        queue.requeueFirst(cut)
        #expect(queue.waiting.map(\.text) == ["urgent", "long", "next"])
    }

    @Test func removeTakesOnlyWhatMatchesAndRestoredLowOnesSurvive() throws {
        var queue = AnnouncementQueue(capacity: 16)
        queue.restore([
            Announcement(id: 4, text: "low", options: options(.low)),
            Announcement(id: 5, text: "a", options: options(.normal, key: "k1")),
            Announcement(id: 6, text: "b", options: options(.urgent, key: "k2")),
        ])
        #expect(queue.count == 3, "restoring never drops the low one")
        #expect(queue.remove { $0.options.clientID == "k1" }.map(\.id) == [5])
        #expect(queue.remove { $0.options.clientID == "missing" }.isEmpty)
        #expect(queue.removeAll().map(\.id) == [6, 4])
        #expect(queue.isEmpty)
        #expect(queue.takeNextID() == 7)
    }
}

/// Client keys: a retry within the window is a duplicate; the window and the bound forget.
struct ClientKeysTests {
    @Test func aKeyIsADuplicateForTenMinutesOnly() {
        var keys = ClientKeys()
        keys.remember("order-7", number: 12, acceptedAt: 1000)
        #expect(keys.lookup("order-7", now: 1000 + 599)?.number == 12)
        #expect(keys.lookup("order-8", now: 1001) == nil)
        #expect(keys.lookup("order-7", now: 1000 + 600) == nil)
        #expect(keys.count == 0, "forgotten, not only hidden")
    }

    @Test func outcomesAreKeptAndARefusedOneIsForgotten() {
        var keys = ClientKeys()
        keys.remember("a", number: 1, acceptedAt: 0)
        keys.settle("a", number: 1, outcome: .done)
        keys.settle("a", number: 2, outcome: .expired)  // another number: ignored
        #expect(keys.lookup("a", now: 1)?.outcome == .done)
        keys.remember("b", number: 3, acceptedAt: 0)
        keys.forget("b", number: 3)
        #expect(keys.lookup("b", now: 1) == nil)
    }

    @Test func theNumberOfKeysIsBounded() {
        var keys = ClientKeys(limit: 100)
        for index in 0..<1000 { keys.remember("k\(index)", number: UInt64(index + 1), acceptedAt: Double(index) / 1000) }
        #expect(keys.count == 100)
        #expect(keys.lookup("k999", now: 2) != nil)
        #expect(keys.lookup("k0", now: 2) == nil)
    }
}
