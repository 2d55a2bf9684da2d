import BobaoPlatform
import CSystemd
import Dispatch
import Glibc
import Synchronization

/// Tells systemd how the service is doing, through libsystemd's `sd_notify` (a unit with `Type=notify`):
/// `READY=1` once the server listens, `STATUS=` lines (`ServiceStatus`) when the sound server, the queue or
/// what speaks changes, `STOPPING=1` when the shutdown begins, and `WATCHDOG=1` from the player's main loop
/// when the unit has `WatchdogSec=`.
///
/// Status changes are coalesced: a line goes out at most once a `statusInterval`, always with the latest
/// state (a change during the pause is sent at its end), and only when its text differs from the last one
/// sent. A thread of its own waits for changes and sends them, so the threads that change the state only
/// note it.
public final class ServiceNotifier: Sendable {
    /// systemd's watchdog interval (`WATCHDOG_USEC`, when `WATCHDOG_PID` is unset or names this process), in
    /// microseconds; nil when the unit has no watchdog. Ping at half of it.
    public let watchdogMicroseconds: UInt64?
    /// The shortest time between two `STATUS=` lines, in seconds.
    let statusInterval: Double
    private let pending = Mutex(Pending())
    private let sending = Mutex(())
    private let wake = DispatchSemaphore(value: 0)

    private struct Pending {
        /// A change not yet looked at; the thread is woken once for any number of them.
        var changed = false
        var stopping = false
        var lastSent: String?
        var lastSentAt = -Double.infinity
        /// What the line says: the server's state, read on the notifier's thread.
        var status: (@Sendable () -> String)?
    }

    /// The notifier for a service systemd started with a notification socket (`NOTIFY_SOCKET`); nil otherwise,
    /// and then nothing is ever sent.
    public static func fromEnvironment() -> ServiceNotifier? {
        guard let socket = getenv("NOTIFY_SOCKET"), socket.pointee != 0 else { return nil }
        var microseconds: UInt64 = 0
        let watchdog = sd_watchdog_enabled(0, &microseconds) > 0 && microseconds > 0 ? microseconds : nil
        return ServiceNotifier(watchdogMicroseconds: watchdog)
    }

    init(watchdogMicroseconds: UInt64?, statusInterval: Double = 1) {
        self.watchdogMicroseconds = watchdogMicroseconds
        self.statusInterval = statusInterval
    }

    /// How often the player's heartbeat should ping the watchdog: half its interval, but not more often than
    /// every 50 ms (a WATCHDOG_USEC of a few microseconds must not turn the audio thread into a sender);
    /// nil without a watchdog.
    public var heartbeatMilliseconds: Int? {
        watchdogMicroseconds.map { Int(min($0 / 2000, UInt64(Int32.max))) }.map { max($0, 50) }
    }

    /// `WATCHDOG=1`: the player's main loop is alive. Called on that loop's thread.
    public func watchdog() {
        send("WATCHDOG=1")
    }

    /// `READY=1` with the first status line; from now on changes are sent.
    func ready(status: @escaping @Sendable () -> String) {
        pending.withLock { $0.status = status }
        let line = status()
        publish(line, stopping: false, as: "READY=1\nSTATUS=\(line)")
        startThread(name: "bobao.systemd") { [self] in publishChanges() }
    }

    /// `STOPPING=1`, with a status line that begins `stopping`, as all later ones do.
    func stopping() {
        let status = pending.withLock { pending -> (@Sendable () -> String)? in
            pending.stopping = true
            return pending.status
        }
        guard let status else { return sending.withLock { _ in send("STOPPING=1") } }
        let line = "stopping; " + status()
        publish(line, stopping: true, as: "STOPPING=1\nSTATUS=\(line)")
    }

    /// What the status line says may have changed. Quick, any thread, any lock held.
    func changed() {
        let first = pending.withLock { pending -> Bool in
            defer { pending.changed = true }
            return !pending.changed
        }
        if first { wake.signal() }
    }

    /// The notifier's thread: waits for a change, lets the interval since the last line pass, then sends the
    /// state as it is then.
    private func publishChanges() {
        while true {
            wake.wait()
            WallClock.sleep(untilMonotonic: pending.withLock { $0.lastSentAt } + statusInterval)
            // Cleared before the state is read: a change from now on wakes the thread again.
            let (status, stopping) = pending.withLock { pending in
                pending.changed = false
                return (pending.status, pending.stopping)
            }
            guard let status else { continue }
            let line = (stopping ? "stopping; " : "") + status()
            publish(line, stopping: stopping, as: "STATUS=\(line)", unlessSent: true)
        }
    }

    /// Sends `message`, which carries the status `line`, read while the shutdown had (not) begun as `stopping`
    /// says; a line read before `stopping` began is stale once it has, and dropped. One send at a time, so the
    /// lines leave in the order they were decided on; never under `pending`, which the player's main loop
    /// takes (in `changed`).
    private func publish(_ line: String, stopping: Bool, as message: String, unlessSent: Bool = false) {
        sending.withLock { _ in
            let send = pending.withLock { pending -> Bool in
                guard pending.stopping == stopping, !unlessSent || line != pending.lastSent else { return false }
                pending.lastSent = line
                pending.lastSentAt = WallClock.monotonicSeconds()
                return true
            }
            if send { self.send(message) }
        }
    }

    private func send(_ message: String) {
        _ = sd_notify(0, message)
    }
}
