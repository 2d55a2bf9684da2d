import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// `bobao serve` under systemd's `Type=notify` and `WatchdogSec=`, with a notification socket of the test's
    /// own standing in for systemd: READY=1 once it listens, STATUS= lines as the sound and the queue change
    /// (at most one a second), WATCHDOG=1 from the player's main loop, STOPPING=1 at SIGTERM.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct ServiceNotifyTests {
        let sound: TestSoundServer.Connection
        /// Sets `WATCHDOG_PID` to the server's own pid, as systemd does: the shell's pid is the one `exec` keeps.
        static let ownWatchdogPID = ["/bin/sh", "-c", "export WATCHDOG_PID=$$; exec \"$@\"", "sh"]

        init() throws {
            sound = try TestSoundServer.shared()
        }

        @Test func readyStatusWatchdogAndStoppingReachTheNotifySocket() throws {
            let notify = try NotifySocket()
            let bobao = try ServerProcess(
                arguments: ["--no-spool"], pulseServer: sound.address,
                environment: notify.environment.merging(["WATCHDOG_USEC": "400000"]) { $1 }, launcher: Self.ownWatchdogPID)
            let environ = try String(contentsOfFile: "/proc/\(bobao.pid)/environ", encoding: .utf8)
            try #require(environ.split(separator: "\0").contains("WATCHDOG_PID=\(bobao.pid)"))

            let ready = try #require(notify.waitForMessage(timeout: 10) { $0.value("READY") == "1" })
            #expect(ready.status?.hasPrefix("sound: ") == true && ready.status?.hasSuffix("; queue: 0 waiting") == true,
                    "\(ready)")
            // Listening by then: a line sent now is accepted.
            #expect(try bobao.exchange("请保管好您的随身物品，祝您生活愉快\n") == ["OK 1"])

            let playing = "sound: playing, sink \(sound.sinkName); queue: 0 waiting"
            let speaking = notify.waitForMessage(timeout: 15) { $0.status == playing + "; speaking #1" }
            #expect(speaking != nil, "\(notify.messages.compactMap(\.status))")
            #expect(bobao.waitForLog("spoke #1", timeout: 20))
            let after = (notify.messages.firstIndex { $0.status == playing + "; speaking #1" } ?? 0) + 1
            let spoken = notify.waitForMessage(after: after, timeout: 5) { $0.status?.contains("#1") == false }
            #expect(spoken?.status == playing, "\(notify.messages.compactMap(\.status))")

            // Pings all along, at half of WATCHDOG_USEC: never as far apart as the watchdog's 400 ms.
            #expect(notify.waitFor(timeout: 5) { $0.count(where: \.isWatchdogPing) >= 10 })
            bobao.signal(SIGTERM)
            let stopping = notify.waitForMessage(timeout: 10) { $0.value("STOPPING") == "1" }
            #expect(stopping?.status?.hasPrefix("stopping; sound: ") == true, "\(String(describing: stopping))")
            #expect(bobao.wait() == 0)

            let messages = notify.messages
            let pings = messages.filter(\.isWatchdogPing).map(\.received)
            let longest = zip(pings, pings.dropFirst()).map { $1 - $0 }.max() ?? .infinity
            #expect(longest < 0.4, "\(pings.count) pings, at most \(longest) s apart")
            #expect(pings.first.map { $0 - ready.received } ?? .infinity < 0.4, "the first ping within the interval")
            // Status lines at most one a second (the one that comes with STOPPING=1 goes at once).
            let statuses = messages.filter { $0.status != nil && $0.value("STOPPING") == nil }.map(\.received)
            let closest = zip(statuses, statuses.dropFirst()).map { $1 - $0 }.min() ?? .infinity
            #expect(closest > 0.9, "status lines \(closest) s apart: \(messages.compactMap(\.status))")
            #expect(bobao.log.contains("systemd watchdog: pinged every 200 ms from the player's main loop"))
        }

        /// Without `WATCHDOG_USEC`, or with a `WATCHDOG_PID` that names another process (libsystemd's
        /// `sd_watchdog_enabled` says no to both), the watchdog is never pinged; readiness and stopping still are.
        @Test(arguments: [[:], ["WATCHDOG_USEC": "400000", "WATCHDOG_PID": "\(getpid())"]])
        func noWatchdogPingsUnlessTheWatchdogIsForThisProcess(watchdog: [String: String]) throws {
            let notify = try NotifySocket()
            let bobao = try ServerProcess(
                arguments: ["--no-spool"], pulseServer: sound.address,
                environment: notify.environment.merging(watchdog) { $1 })
            #expect(notify.waitForMessage(timeout: 10) { $0.value("READY") == "1" } != nil)
            // Three of the intervals pings would come at.
            #expect(!notify.waitFor(timeout: 0.6) { $0.contains(where: \.isWatchdogPing) })
            bobao.signal(SIGTERM)
            #expect(notify.waitForMessage(timeout: 10) { $0.value("STOPPING") == "1" } != nil)
            #expect(bobao.wait() == 0)
            let pings = notify.messages.filter(\.isWatchdogPing)
            #expect(pings.isEmpty, "\(notify.messages)")
            #expect(!bobao.log.contains("systemd watchdog"))
        }

        /// Without `NOTIFY_SOCKET` (not started by systemd with `Type=notify`) nothing is set up: no notifier
        /// thread, no heartbeat, whatever `WATCHDOG_USEC` says.
        @Test func withoutANotifySocketNothingIsSetUp() throws {
            try #require(ProcessInfo.processInfo.environment["NOTIFY_SOCKET"] == nil, "the test runs under systemd")
            let bobao = try ServerProcess(
                arguments: ["--no-spool"], pulseServer: sound.address, environment: ["WATCHDOG_USEC": "400000"],
                launcher: Self.ownWatchdogPID)
            #expect(bobao.waitForLog("keep-alive stream open"))
            let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(bobao.pid)/task")
            let threads = tasks.compactMap { try? String(contentsOfFile: "/proc/\(bobao.pid)/task/\($0)/comm", encoding: .utf8) }
                .map { $0.trimmingCharacters(in: .newlines) }
            #expect(threads.contains("bobao.pulse"), "\(threads)")
            #expect(!threads.contains("bobao.systemd"), "\(threads)")
            #expect(bobao.stop() == 0)
            #expect(!bobao.log.contains("systemd watchdog"))
        }
    }
}
