import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// An urgent announcement cuts in on a normal one that is being spoken, which is said again afterwards.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct CutInTests {
        @Test func anUrgentAnnouncementCutsInAndTheCutOneIsSaidAgainInFullAfterIt() throws {
            let sound = try TestSoundServer.shared()
            // The recorder first: a monitor attached later finds the null sink rendering far ahead.
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            // A one-second idle timeout: a connection waiting for its events is not idle.
            let bobao = try ServerProcess(arguments: ["--no-spool", "--idle-timeout", "1"], pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            let rate = recorder.sampleRate
            func seconds(_ samples: Int) -> Double { Double(samples) / Double(rate) }
            let long = "请保管好您的随身物品，祝您生活愉快，欢迎下次光临"  // 6.4 s of speech
            let urgent = "紧急通知"
            let longRendering = try Rendering(long), urgentRendering = try Rendering(urgent)
            let begin = recorder.samples.count

            let normal = try EventClient(port: bobao.port)
            try normal.send(#"{"text": "\#(long)", "wait": true}"# + "\n")
            // Ending the sending side: the server must still keep the connection open for the events.
            normal.finishSending()
            try #require(normal.waitForEvent("start", number: 1) != nil, "\(normal.lines)")
            // Let about a second of it be heard.
            let heardOneSecond = recorder.waitUntil(timeout: 10) { samples in
                guard samples.count > begin,
                      let first = SignalAnalysis(Array(samples[begin...]), sampleRate: rate).firstLoudSample()
                else { return false }
                return samples.count - begin - first >= rate
            }
            try #require(heardOneSecond, "the long announcement was not heard")

            // How delays are measured: the recording's length when the urgent line is sent marks "now" on its
            // timeline (as PlayerCutTests does for a cut). The recorder gets the sink's monitor in 20 ms chunks,
            // behind the sink, so the mark is early, never late: the time from it to the urgent speech's onset
            // in the recording overstates the real delay.
            let sentAt = recorder.samples.count - begin
            let cutter = try EventClient(port: bobao.port)
            try cutter.send(#"{"text": "\#(urgent)", "priority": "urgent", "wait": true}"# + "\n")
            cutter.finishSending()
            try #require(cutter.waitForEvent("done", number: 2, timeout: 20) != nil, "\(cutter.lines)")
            try #require(normal.waitForEvent("done", number: 1, timeout: 30) != nil, "\(normal.lines)")
            #expect(recorder.waitForQuiet(after: begin, quiet: 0.4))
            let heard = recorder.analysis(from: begin)

            // The urgent speech's onset: where the loudness contour of its rendering's opening matches the
            // recording. A loudness threshold cannot tell where the cut speech ends and the urgent one begins
            // when they follow each other within milliseconds; the contour of 0.6 s of the text can.
            let urgentMatch = try #require(heard.contourMatch(
                of: urgentRendering.opening(seconds: 0.6), startingIn: (sentAt - rate / 10)..<(sentAt + rate)))
            #expect(urgentMatch.correlation > 0.9, "the urgent speech was not found within 1 s of the send: \(urgentMatch)")
            let onset = urgentMatch.index
            let delay = seconds(onset - sentAt)
            #expect(delay < 0.1, "the urgent speech began \(delay) s after it was sent")

            // The cut speech: its last loud 10 ms window before the urgent's onset. It was speaking when the
            // urgent line was sent, and stops within 50 ms (plus 30 ms for the windows and chunks).
            let before = SignalAnalysis(Array(heard.samples[..<onset]), sampleRate: rate)
            let firstRendition = try #require(before.segments(bridging: .infinity).first)
            let cutEnd = firstRendition.end
            #expect(cutEnd - seconds(sentAt) < 0.08, "the cut speech went on \(cutEnd - seconds(sentAt)) s after the send")
            #expect(firstRendition.duration > 0.9, "the long one sounded until the cut: \(firstRendition)")

            // The urgent one is heard in full, once.
            let afterOnset = SignalAnalysis(Array(heard.samples[onset...]), sampleRate: rate)
            let urgentHeard = try #require(afterOnset.segments().first)
            let urgentExpected = urgentRendering.soundingDuration
            #expect(urgentHeard.start < 0.02, "\(urgentHeard)")
            #expect(abs(urgentHeard.duration - urgentExpected) < 0.1 * urgentExpected,
                    "urgent heard for \(urgentHeard.duration) s, its rendering sounds \(urgentExpected) s")

            // Then the cut one again, from its start (its opening matches) to its end.
            let urgentEnd = onset + Int(urgentHeard.end * Double(rate))
            let againMatch = try #require(heard.contourMatch(
                of: longRendering.opening(seconds: 0.6), startingIn: urgentEnd..<(urgentEnd + 2 * rate)))
            #expect(againMatch.correlation > 0.9, "the cut announcement's start was not heard again: \(againMatch)")
            let again = SignalAnalysis(Array(heard.samples[againMatch.index...]), sampleRate: rate)
            let longExpected = longRendering.soundingDuration
            #expect(abs(again.soundingDuration() - longExpected) < 0.05 * longExpected,
                    "said again for \(again.soundingDuration()) s; uninterrupted it sounds \(longExpected) s")
            #expect(again.segments(bridging: 0.3).count == 1, "one rendition, nothing after it: \(again.segments())")

            // The events, in order on each connection, each connection closed after its outcome.
            #expect(normal.lines.first?.text == "OK 1")
            #expect(cutter.lines.first?.text == "OK 2")
            #expect(normal.events(of: 1) == ["start", "interrupted", "start", "done"], "\(normal.lines)")
            #expect(cutter.events(of: 2) == ["start", "done"], "\(cutter.lines)")
            #expect(normal.waitForEnd() && cutter.waitForEnd(), "the connections close after the outcomes")
            #expect(normal.lines.count == 5 && cutter.lines.count == 3, "nothing else, no ERR idle: \(normal.lines) \(cutter.lines)")
            // Across the connections by the kernel's receive times: the urgent one's outcome went out before
            // the cut one started again.
            let urgentDone = try #require(cutter.lines.first { $0.event == "done" }?.received)
            let restarts = normal.lines.filter { $0.event == "start" }.compactMap(\.received)
            try #require(restarts.count == 2, "the kernel's receive times: \(normal.lines)")
            #expect(urgentDone < restarts[1], "urgent done at \(urgentDone), the cut one started again at \(restarts[1])")
            let interrupted = try #require(normal.lines.first { $0.event == "interrupted" }?.received)
            #expect(interrupted < urgentDone)

            #expect(bobao.stop() == 0)
            let log = bobao.log
            #expect(log.contains("#1 gave way to an urgent announcement; it will be said again from its start"))
            #expect(log.components(separatedBy: "speaking #1 ").count - 1 == 2, "\(log)")
            #expect(log.components(separatedBy: "speaking #2 ").count - 1 == 1, "\(log)")
            func ms(_ seconds: Double) -> Int { Int((seconds * 1000).rounded()) }
            print("cut-in: the urgent speech was heard \(ms(delay)) ms after the send (\(urgentMatch)), the cut one "
                + "again for \(again.soundingDuration()) s of \(longExpected) s (\(againMatch))")
        }
        /// Without a sound server the speaker takes the next announcement and waits with it; `status` then
        /// calls it speaking. An urgent line in that time has nothing to cut: the one taken never started, so
        /// its client must not hear `interrupted` before any `start` (the contract is `start`, again after
        /// `interrupted`, then one outcome), nor the log say it gave way.
        @Test func anUrgentLineWhileTheTakenOneWaitsForTheSoundServerInterruptsNothing() throws {
            let pulse = try PrivatePulseServer(sinkName: "cut_in_late")
            pulse.stop()
            let bobao = try ServerProcess(arguments: ["--no-spool"], pulseServer: pulse.address)
            #expect(bobao.waitForLog("sound server unavailable"))
            let normal = try EventClient(port: bobao.port)
            try normal.send(#"{"text": "请保管好您的随身物品", "wait": true}"# + "\n")
            normal.finishSending()
            #expect(normal.waitForLines(1).first?.text == "OK 1")
            // The speaker takes it at once; status shows when (a short poll with a deadline: no event says it).
            let deadline = Date().addingTimeInterval(10)
            var taken = false
            while !taken && Date() < deadline {
                let status = try bobao.exchange(#"{"cmd": "status"}"# + "\n").first ?? ""
                let object = try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any]
                taken = (object?["speaking"] as? [String: Any])?["number"] as? Int == 1
                if !taken { Thread.sleep(forTimeInterval: 0.05) }
            }
            try #require(taken, "#1 was never taken")
            let cutter = try EventClient(port: bobao.port)
            try cutter.send(#"{"text": "紧急通知", "priority": "urgent", "wait": true}"# + "\n")
            cutter.finishSending()
            #expect(cutter.waitForLines(1).first?.text == "OK 2")

            try pulse.start()
            #expect(cutter.waitForEvent("done", number: 2, timeout: 20) != nil, "\(cutter.lines)")
            #expect(normal.waitForEvent("done", number: 1, timeout: 20) != nil, "\(normal.lines)")
            // Either may have waited for the sound server (a `waiting` event); neither started before it was there.
            #expect(cutter.events(of: 2).filter { $0 != "waiting" } == ["start", "done"])
            #expect(normal.events(of: 1).filter { $0 != "waiting" } == ["start", "done"],
                    "#1 never started before the urgent one: \(normal.lines)")
            #expect(bobao.stop() == 0)
            #expect(!bobao.log.contains("#1 gave way to an urgent announcement"), "\(bobao.log)")
        }
    }
}
