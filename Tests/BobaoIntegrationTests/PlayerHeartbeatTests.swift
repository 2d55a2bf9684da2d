@testable import BobaoAudio
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// The keep-alive player's heartbeat (what pings systemd's watchdog): it runs on the player's own main loop
    /// thread, whether or not a sound server is there, and stops while that thread is stuck.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct PlayerHeartbeatTests {
        static let intervalMilliseconds = 50

        /// Calls of a hook (heartbeats, state changes): when (CLOCK_MONOTONIC seconds) and on which thread.
        final class Calls: Sendable {
            private let calls = Watched((times: [Double](), threads: Set<String>()))

            func record() {
                let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
                let now = PlayerCutTests.now()
                calls.update {
                    $0.times.append(now)
                    $0.threads.insert(name.trimmingCharacters(in: .newlines))
                }
            }

            var count: Int { calls.read { $0.times.count } }
            var all: [Double] { calls.read { $0.times } }
            var threadNames: Set<String> { calls.read { $0.threads } }

            /// Waits until there have been `count` calls in all.
            func waitFor(_ count: Int, timeout: Double = 5) -> Bool {
                calls.waitFor(timeout: timeout) { $0.times.count >= count }
            }
        }

        static func player(serverAddress: String, sinkName: String?) -> (KeepAlivePlayer, Calls) {
            var configuration = PlayerConfiguration()
            configuration.serverAddress = serverAddress
            configuration.sinkName = sinkName
            configuration.heartbeatMilliseconds = intervalMilliseconds
            let beats = Calls()
            return (KeepAlivePlayer(configuration: configuration, log: { _ in }, heartbeat: { beats.record() }), beats)
        }

        @Test func noHeartbeatWhileTheMainLoopIsStalledAndTheyResumeAfterIt() throws {
            let sound = try TestSoundServer.shared()
            let (player, beats) = Self.player(serverAddress: sound.address, sinkName: sound.sinkName)
            player.start()
            defer { player.stop() }
            #expect(player.waitUntilReady(until: PlayerCutTests.now() + 10))
            #expect(beats.waitFor(5))
            #expect(beats.threadNames == ["bobao.pulse"], "on the main loop's own thread")

            // Holding the main loop's lock stalls its thread as a stuck callback would: no callback runs.
            player.lock()
            let stalled = beats.count
            Thread.sleep(forTimeInterval: 1)  // the stall itself: twenty intervals
            let duringStall = beats.count
            let released = PlayerCutTests.now()
            player.unlock()
            #expect(duringStall == stalled, "\(duringStall - stalled) heartbeat(s) while the main loop was stalled")

            #expect(beats.waitFor(stalled + 5, timeout: 2), "they resume")
            let resumed = beats.all.dropFirst(stalled)
            #expect(resumed.allSatisfy { $0 >= released })
            #expect((resumed.first ?? .infinity) - released < 0.2, "the late one comes once the loop runs")
        }

        /// No sound server at first, then one, then none again: the heartbeat goes on throughout (its timer is
        /// the main loop's, not the connection's, which is made anew each time), and stops with the player.
        @Test func theHeartbeatGoesOnWithoutASoundServerAndAcrossReconnectionsUntilStop() throws {
            let pulse = try PrivatePulseServer(sinkName: "heartbeat")
            pulse.stop()
            let (player, beats) = Self.player(serverAddress: pulse.address, sinkName: "heartbeat")
            let changes = Calls()  // counts the player's state changes
            player.setStateObserver { changes.record() }
            player.start()
            #expect(beats.waitFor(5), "beats while no sound server is there")
            #expect(player.status.state == "connecting", "\(player.status)")

            try pulse.start()
            #expect(player.waitUntilReady(until: PlayerCutTests.now() + 15))
            let connected = beats.count, changed = changes.count
            #expect(changed > 0, "the state observer heard of the change")
            #expect(beats.waitFor(connected + 5))

            pulse.stop()
            #expect(changes.waitFor(changed + 1), "the state observer hears of the loss")
            let lost = beats.count
            #expect(beats.waitFor(lost + 5), "beats while the player reconnects")
            #expect(!player.isReady)

            player.stop()
            let stopped = beats.count
            // Three intervals at least, without a beat.
            #expect(!beats.waitFor(stopped + 1, timeout: 0.3), "no heartbeat after stop")
            let times = beats.all
            let longest = zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? .infinity
            #expect(longest < 0.5, "heartbeats \(longest) s apart at most, every \(Self.intervalMilliseconds) ms asked")
        }
    }
}
