import BobaoPlatform
import Synchronization

/// `status` events: the `/status` object, sent to subscribers when the sound state, the queue or what speaks
/// may have changed, coalesced to at most one every `statusInterval` (a change during the pause is sent at
/// its end, with the state as it is then), and only when it differs from the last one sent. A thread of its
/// own reads the state and sends it, so the threads that change it (the player's main loop with its lock
/// held, the board's callers) only note the change.
extension AnnouncementActivity {
    struct StatusState {
        /// What a `status` event says: the `/status` object, read on the status thread.
        var source: (@Sendable () -> String)?
        /// A change not yet looked at; the thread is woken once for any number of them.
        var changed = false
        var stopped = false
        var lastSent: String?
        var lastSentAt = -Double.infinity
    }

    /// Sets what `status` events carry (the `/status` object; a trailing newline is dropped) and starts the
    /// thread that sends them. Once; later calls only replace the source.
    public func setStatusSource(_ source: @escaping @Sendable () -> String) {
        let first = status.withLock { status -> Bool in
            defer { status.source = source }
            return status.source == nil && !status.stopped
        }
        guard first else { return }
        startThread(name: "bobao.activity") { [self] in publishStatusChanges() }
    }

    /// The sound state, the queue or what speaks may have changed. Quick; any thread, any lock held (the
    /// player calls it with its main loop lock held).
    public func statusMayHaveChanged() {
        let first = status.withLock { status -> Bool in
            defer { status.changed = true }
            return !status.changed
        }
        if first { statusWake.signal() }
    }

    /// Stops the status thread (no more `status` events but the first of each new subscriber).
    public func stop() {
        status.withLock { $0.stopped = true }
        statusWake.signal()
    }

    /// The status as the source says now; nil without a source.
    func currentStatus() -> String? {
        guard let source = status.withLock({ $0.source }) else { return nil }
        var text = source()
        while text.last == "\n" { text.removeLast() }
        return text
    }

    /// The status thread: waits for a change, lets the interval since the last event pass, then sends the
    /// state as it is then, if anyone listens.
    private func publishStatusChanges() {
        while true {
            statusWake.wait()
            WallClock.sleep(untilMonotonic: status.withLock { $0.lastSentAt } + statusInterval)
            // Cleared before the state is read: a change from now on wakes the thread again.
            let stopped = status.withLock { status in
                status.changed = false
                return status.stopped
            }
            if stopped { return }
            guard subscriberCount > 0 else {
                status.withLock { $0.lastSent = nil }  // each new subscriber gets the state of its own
                continue
            }
            guard let text = currentStatus() else { continue }
            let unchanged = status.withLock { status in
                defer {
                    status.lastSent = text
                    status.lastSentAt = WallClock.monotonicSeconds()
                }
                return status.lastSent == text
            }
            if !unchanged { publish("status") { _ in text } }
        }
    }
}
