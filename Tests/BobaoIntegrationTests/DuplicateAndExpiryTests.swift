import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// Announcements that are accepted but must not be heard: repeats of a client's id (also across a
    /// restart), expired ones, and ones cancelled, skipped or cleared by a client.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct DuplicateAndExpiryTests {
        let sound: TestSoundServer.Connection

        init() throws {
            sound = try TestSoundServer.shared()
        }

        /// Connects, sends `line` and waits for its first reply.
        static func submit(_ line: String, to bobao: ServerProcess) throws -> (client: EventClient, reply: String) {
            let client = try EventClient(port: bobao.port)
            try client.send(line + "\n")
            client.finishSending()
            let reply = client.waitForLines(1).first?.text ?? "nothing"
            return (client, reply)
        }

        @Test func withoutASpoolClientsWaitingAtAStopLearnTheirAnnouncementsWereLost() throws {
            let bobao = try ServerProcess(arguments: ["--no-spool", "--shutdown-timeout", "0"], pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            let speaking = try Self.submit(#"{"text":"请三号顾客到一号窗口取餐谢谢光临","repeat":5,"wait":true}"#, to: bobao)
            #expect(speaking.reply == "OK 1")
            #expect(speaking.client.waitForEvent("start", number: 1) != nil)
            let waiting = try Self.submit(#"{"text":"后面的","wait":true}"#, to: bobao)
            #expect(waiting.reply == "OK 2")
            bobao.signal(SIGTERM)
            let cut = speaking.client.waitForEvent("failed", number: 1)
            #expect(cut?.object?["reason"] as? String == "the server stopped while it was spoken; not kept (--no-spool)")
            let lost = waiting.client.waitForEvent("failed", number: 2)
            #expect(lost?.object?["reason"] as? String == "the server stopped before its turn; not kept (--no-spool)")
            #expect(bobao.wait() == 0)
        }

        /// How many times the log says it began to speak message `number`.
        static func speakings(of number: Int, in log: String) -> Int {
            log.components(separatedBy: "speaking #\(number) ").count - 1
        }

        @Test func aRepeatedIDIsAnsweredDuplicateAndNotSpokenEvenAfterARestart() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-duplicates-\(UUID())").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let spool = folder + "/spool.db"
            let marker = "欢迎光临", markerDuration = try Rendering(marker).soundingDuration
            let order = #"{"text": "三号桌请注意", "id": "order-7", "wait": true}"#

            let first = try ServerProcess(arguments: ["--spool", spool], pulseServer: sound.address)
            #expect(first.waitForLog("keep-alive stream open"))
            let beforeOriginal = recorder.samples.count
            let original = try Self.submit(order, to: first)
            #expect(original.reply == "OK 1")
            #expect(original.client.waitForEvent("done", number: 1) != nil, "\(original.client.lines)")
            #expect(original.client.events(of: 1) == ["start", "done"])
            // Its last sound may reach the recorder after `done` (the recorder lags the sink, more on PipeWire).
            #expect(recorder.waitForQuiet(after: beforeOriginal, quiet: 0.3))

            // The same id again, then a marker on the same connection: if the repeat were queued, it would be
            // heard before the marker. With "wait", the repeat is told the original's outcome.
            var start = recorder.samples.count
            let again = try EventClient(port: first.port)
            try again.send(order + "\n" + #"{"text": "\#(marker)", "wait": true}"# + "\n")
            again.finishSending()
            #expect(again.waitForEvent("done", number: 2) != nil, "\(again.lines)")
            #expect(again.waitForEnd())
            #expect(again.lines.map(\.text).prefix(2) == ["OK 1 duplicate", "OK 2"], "\(again.lines)")
            #expect(again.events(of: 1) == ["done"], "the original's outcome: \(again.lines)")
            #expect(again.events(of: 2) == ["start", "done"])
            #expect(recorder.waitForQuiet(after: start))
            var heard = recorder.analysis(from: start).segments()
            #expect(heard.count == 1 && abs((heard.first?.duration ?? 0) - markerDuration) < 0.1 * markerDuration,
                    "only the marker (\(markerDuration) s) was heard: \(heard)")
            #expect(Self.speakings(of: 1, in: first.log) == 1)
            #expect(first.log.contains("duplicate of #1 from 127.0.0.1:"))
            #expect(first.stop() == 0)

            // A new server on the same spool remembers the id, for any text, and the original's outcome.
            let second = try ServerProcess(arguments: ["--spool", spool], pulseServer: sound.address)
            #expect(second.waitForLog("keep-alive stream open"))
            start = recorder.samples.count
            let afterRestart = try EventClient(port: second.port)
            try afterRestart.send(#"{"text": "另一段话", "id": "order-7", "wait": true}"# + "\n"
                + #"{"text": "\#(marker)", "wait": true}"# + "\n")
            afterRestart.finishSending()
            #expect(afterRestart.waitForEvent("done", number: 3) != nil, "\(afterRestart.lines)")
            #expect(afterRestart.waitForEnd())
            #expect(afterRestart.lines.map(\.text).prefix(2) == ["OK 1 duplicate", "OK 3"], "\(afterRestart.lines)")
            #expect(afterRestart.events(of: 1) == ["done"], "the original's outcome, from the spool: \(afterRestart.lines)")
            #expect(recorder.waitForQuiet(after: start))
            heard = recorder.analysis(from: start).segments()
            #expect(heard.count == 1 && abs((heard.first?.duration ?? 0) - markerDuration) < 0.1 * markerDuration,
                    "only the marker (\(markerDuration) s) was heard: \(heard)")
            #expect(second.stop() == 0)
            #expect(second.log.contains("duplicate of #1 from 127.0.0.1:"))
            #expect(Self.speakings(of: 1, in: second.log) == 0, "\(second.log)")
            #expect(!second.log.contains("另一段话\""))
        }

        @Test func expiredCancelledSkippedAndClearedAnnouncementsAreNotSpoken() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let bobao = try ServerProcess(arguments: ["--no-spool"], pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            let rate = recorder.sampleRate
            func seconds(_ samples: Int) -> Double { Double(samples) / Double(rate) }
            let long = "请保管好您的随身物品，祝您生活愉快，欢迎下次光临"
            let next = "欢迎光临", nextRendering = try Rendering(next)
            let begin = recorder.samples.count

            // #1 speaks; behind it #2 (one second to live), #3 (to be cancelled) and #4.
            let speaking = try Self.submit(#"{"text": "\#(long)", "id": "long", "wait": true}"#, to: bobao)
            let expiring = try Self.submit(#"{"text": "过期的通知", "ttl": 1, "wait": true}"#, to: bobao)
            let cancelled = try Self.submit(#"{"text": "取消的通知", "id": "cancel-me", "wait": true}"#, to: bobao)
            let following = try Self.submit(#"{"text": "\#(next)", "wait": true}"#, to: bobao)
            #expect([speaking.reply, expiring.reply, cancelled.reply, following.reply] == ["OK 1", "OK 2", "OK 3", "OK 4"])
            #expect(speaking.client.waitForEvent("start", number: 1) != nil)
            // A second and a half of #1 heard: #2's second has run out.
            #expect(recorder.waitUntil(timeout: 10) { samples in
                guard samples.count > begin,
                      let first = SignalAnalysis(Array(samples[begin...]), sampleRate: rate).firstLoudSample()
                else { return false }
                return samples.count - begin - first >= rate * 3 / 2
            })

            #expect(try bobao.exchange(#"{"cmd": "cancel", "id": "cancel-me"}"# + "\n") == ["OK cancelled #3"])
            let cancellation = cancelled.client.waitForEvent("cancelled", number: 3)
            #expect(cancellation?.object?["reason"] as? String == "cancelled by a client", "\(cancelled.client.lines)")
            #expect(cancelled.client.events(of: 3) == ["cancelled"])
            #expect(cancelled.client.waitForEnd())

            // Skip #1 while it speaks: it falls silent, #2 has expired, and #4 follows.
            let skippedAt = recorder.samples.count - begin
            #expect(try bobao.exchange(#"{"cmd": "skip"}"# + "\n") == ["OK skipped #1"])
            let skip = speaking.client.waitForEvent("cancelled", number: 1)
            #expect(skip?.object?["reason"] as? String == "skipped by a client", "\(speaking.client.lines)")
            #expect(speaking.client.events(of: 1) == ["start", "cancelled"])
            #expect(expiring.client.waitForEvent("expired", number: 2) != nil, "\(expiring.client.lines)")
            #expect(expiring.client.events(of: 2) == ["expired"])
            #expect(following.client.waitForEvent("done", number: 4) != nil, "\(following.client.lines)")
            #expect(following.client.events(of: 4) == ["start", "done"])
            #expect(recorder.waitForQuiet(after: begin))
            let heard = recorder.analysis(from: begin)
            // #4's onset, by its loudness contour (it may follow #1's last sound within milliseconds).
            let match = try #require(heard.contourMatch(
                of: nextRendering.opening(seconds: 0.6), startingIn: (skippedAt - rate / 10)..<(skippedAt + 2 * rate)))
            #expect(match.correlation > 0.9, "#4 was not heard within 2 s of the skip: \(match)")
            let before = SignalAnalysis(Array(heard.samples[..<match.index]), sampleRate: rate)
            let skippedEnd = try #require(before.segments(bridging: .infinity).last).end
            #expect(skippedEnd - seconds(skippedAt) < 0.08, "#1 went on \(skippedEnd - seconds(skippedAt)) s after the skip")
            let nextDelay = seconds(match.index - skippedAt)
            #expect(nextDelay < 0.4, "#4 began \(nextDelay) s after the skip")
            // After #1, only #4, in full: neither #2 nor #3 was heard.
            let after = SignalAnalysis(Array(heard.samples[match.index...]), sampleRate: rate).segments()
            #expect(after.count == 1 && abs((after.first?.duration ?? 0) - nextRendering.soundingDuration) < 0.1,
                    "\(after) against \(nextRendering.soundingDuration) s")

            // clear: #6 and #7 wait behind #5 and are cancelled; then cancel all stops #5 too.
            let secondBegin = recorder.samples.count
            let fifth = try Self.submit(#"{"text": "\#(long)", "wait": true}"#, to: bobao)
            #expect(fifth.reply == "OK 5")
            let waiting = try EventClient(port: bobao.port)
            try waiting.send(#"{"text": "六号", "wait": true}"# + "\n" + #"{"text": "七号", "wait": true}"# + "\n")
            waiting.finishSending()
            #expect(waiting.waitForLines(2).map(\.text) == ["OK 6", "OK 7"])
            #expect(fifth.client.waitForEvent("start", number: 5) != nil)
            #expect(try bobao.exchange(#"{"cmd": "clear"}"# + "\n") == ["OK cleared 2"])
            #expect(waiting.waitForEnd(), "both outcomes sent: \(waiting.lines)")
            #expect(waiting.events(of: 6) == ["cancelled"] && waiting.events(of: 7) == ["cancelled"], "\(waiting.lines)")
            #expect(waiting.lines.filter { $0.event != nil }.allSatisfy { $0.object?["reason"] as? String == "cleared by a client" })
            #expect(recorder.waitUntil(timeout: 10) { samples in
                samples.count > secondBegin
                    && SignalAnalysis(Array(samples[secondBegin...]), sampleRate: rate).firstLoudSample() != nil
            }, "#5 is heard")
            let cancelledAllAt = recorder.samples.count
            #expect(try bobao.exchange(#"{"cmd": "cancel", "all": true}"# + "\n") == ["OK cancelled 1"])
            #expect(fifth.client.waitForEvent("cancelled", number: 5) != nil)
            #expect(fifth.client.events(of: 5) == ["start", "cancelled"])
            recorder.record(seconds: 0.5)
            let fifthHeard = recorder.analysis(from: secondBegin).segments(bridging: .infinity)
            let fallsSilent = (fifthHeard.last?.end ?? .infinity) - seconds(cancelledAllAt - secondBegin)
            #expect(fallsSilent < 0.08, "#5 went on \(fallsSilent) s after cancel all: \(fifthHeard)")

            let status = try #require(bobao.exchange(#"{"cmd": "status"}"# + "\n").first)
            let counters = try #require(
                (try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])?["counters"] as? [String: Int])
            #expect(counters["accepted"] == 7 && counters["done"] == 1 && counters["expired"] == 1
                    && counters["cancelled"] == 5, "\(status)")

            #expect(bobao.stop() == 0)
            let log = bobao.log
            for number in [2, 3, 6, 7] {
                #expect(Self.speakings(of: number, in: log) == 0, "#\(number) was spoken:\n\(log)")
            }
            #expect(log.contains("expired #2 \"过期的通知\": its turn came"), "\(log)")
            #expect(log.contains("its ttl of 1 s; not spoken"))
            #expect(log.contains("cancelled #3 \"取消的通知\" (cancelled by a client); not spoken"))
            #expect(log.contains("stopped #1 (skipped by a client)"))
            #expect(log.contains("cleared 2 waiting announcement(s) (cleared by a client); not spoken"))
            func ms(_ seconds: Double) -> Int { Int((seconds * 1000).rounded()) }
            print("skip: #1 silent \(ms(skippedEnd - seconds(skippedAt))) ms after the skip, #4 began \(ms(nextDelay)) ms "
                + "after it (\(match)); cancel all: silent \(ms(fallsSilent)) ms after it")
        }
    }
}
