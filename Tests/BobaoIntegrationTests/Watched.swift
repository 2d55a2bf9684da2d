import Foundation

/// A value that one thread changes and others wait on: every change wakes the waiters.
final class Watched<Value>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func read<T>(_ body: (Value) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(value)
    }

    func update(_ change: (inout Value) -> Void) {
        condition.lock()
        change(&value)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits, waking on every change, until `predicate` holds or `timeout` passes; returns whether it holds.
    @discardableResult
    func waitFor(timeout: Double, _ predicate: (Value) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(value) {
            if !condition.wait(until: deadline) { return predicate(value) }
        }
        return true
    }
}
