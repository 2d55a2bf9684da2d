import BobaoCore
import BobaoServer
import BobaoSpeech
import BobaoTestSupport
import Foundation
import Synchronization
import Testing


extension SoundSuites {
    /// Sends lines to a real `bobao serve` over TCP and checks what reached the PulseAudio null sink.
    /// Serialized: every test here listens to the same sink. The recorder starts before the server, as in
    /// the benchmark: a monitor that attaches later finds the null sink rendering far ahead (Bobao's idle
    /// stream asks for ~750 ms of latency), and its first chunks arrive only after the next rewind.
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct PipelineTests {
        let sound: TestSoundServer.Connection

        init() throws {
            sound = try TestSoundServer.shared()
        }

        /// How long eSpeak's rendering of `text` sounds, measured the same way as the recordings.
        func renderedSoundingDuration(_ text: String) throws -> Double {
            let synthesizer = try EspeakSynthesizer.shared()
            let samples = Mutex<[Int16]>([])
            try synthesizer.synthesize(text, parameters: SpeechParameters()) { event in
                if case .audio(let chunk) = event { samples.withLock { $0.append(contentsOf: chunk) } }
            }
            return SignalAnalysis(samples.withLock { $0 }, sampleRate: synthesizer.sampleRate).soundingDuration()
        }

        /// Waits until the recording holds `count` utterances followed by `quiet` seconds of silence.
        func waitForUtterances(_ count: Int, in recorder: MonitorRecorder, quiet: Double = 0.8, timeout: Double = 30)
            -> [SignalAnalysis.Segment]
        {
            recorder.waitForUtterances(count, quiet: quiet, timeout: timeout)
        }

        @Test func aLineSentOverTCPIsHeard() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let server = try ServerProcess(pulseServer: sound.address)
            #expect(server.waitForLog("keep-alive stream open"))
            #expect(try server.exchange("新客户来了\n") == ["OK 1"])
            let segments = waitForUtterances(1, in: recorder)
            #expect(segments.count == 1, "\(segments)")
            let expected = try renderedSoundingDuration("新客户来了")
            let heard = recorder.analysis.soundingDuration()
            #expect(abs(heard - expected) < 0.15 * expected, "heard \(heard) s, render gives \(expected) s")
            #expect(server.stop() == 0)
        }

        @Test func numbersAreSpokenAsWords() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let server = try ServerProcess(pulseServer: sound.address)
            #expect(try server.exchange("收款128.50元\n") == ["OK 1"])
            #expect(server.waitForLog("spoke #1"))
            #expect(server.log.contains("speaking #1 \"收款128.50元\" as \"收款一百二十八点五元\""))
            // And what was heard lasts as long as those words take to say.
            let segments = waitForUtterances(1, in: recorder)
            let words = try renderedSoundingDuration("收款一百二十八点五元")
            #expect(segments.count == 1)
            #expect(abs(recorder.analysis.soundingDuration() - words) < 0.15 * words)
            #expect(server.stop() == 0)
        }

        @Test func threeLinesAreThreeUtterancesInOrderNoneCut() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let server = try ServerProcess(pulseServer: sound.address)
            #expect(server.waitForLog("keep-alive stream open"))
            // Different lengths, so the order can be read off the recording.
            let texts = ["请到三号窗口办理", "好", "欢迎光临"]
            #expect(try server.exchange(texts.joined(separator: "\n") + "\n") == ["OK 1", "OK 2", "OK 3"])
            let segments = waitForUtterances(3, in: recorder)
            try #require(segments.count == 3, "\(segments)")
            for (segment, text) in zip(segments, texts) {
                let expected = try renderedSoundingDuration(text)
                #expect(abs(segment.duration - expected) < 0.1 + 0.1 * expected, "\(text): heard \(segment), render \(expected) s")
            }
            for (earlier, later) in zip(segments, segments.dropFirst()) {
                #expect(later.start - earlier.end >= 0.25, "no silence between \(earlier) and \(later)")
            }
            #expect(server.stop() == 0)
        }

        @Test func lastLineWithoutNewlineAndCRLFLinesAreSpokenCleanly() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let server = try ServerProcess(pulseServer: sound.address)
            #expect(server.waitForLog("keep-alive stream open"))
            #expect(try server.exchange("欢迎光临\r\n\r\n好") == ["OK 1", "OK 2"])
            let segments = waitForUtterances(2, in: recorder)
            try #require(segments.count == 2, "\(segments)")
            // A stray CR would be read aloud or lengthen the utterance; each must match the render of the
            // bare text.
            #expect(abs(segments[0].duration - (try renderedSoundingDuration("欢迎光临"))) < 0.12)
            #expect(abs(segments[1].duration - (try renderedSoundingDuration("好"))) < 0.12)
            #expect(server.log.contains("\"欢迎光临\""))
            #expect(!server.log.contains("\\r"))
            #expect(server.stop() == 0)
        }

        @Test func twoHundredConcurrentClientsAllGetOK() throws {
            // All 200 come from 127.0.0.1: the per-address rate limit is off for this test.
            let server = try ServerProcess(arguments: ["--line-rate", "0"], pulseServer: sound.address)
            let clients = try (0..<200).map { _ in try LineClient(connectingTo: ListenAddress(host: "127.0.0.1", port: server.port)) }
            let replies = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: clients.count) { index in
                do {
                    try clients[index].send("\(index)号请取餐\n")
                    clients[index].finishSending()
                    let reply = clients[index].readLine() ?? "nothing"
                    replies.withLock { $0.append(reply) }
                } catch {
                    replies.withLock { $0.append("\(error)") }
                }
            }
            let all = replies.withLock { $0 }
            #expect(all.count == 200)
            #expect(all.allSatisfy { $0.hasPrefix("OK ") }, "\(all.filter { !$0.hasPrefix("OK ") }.prefix(3))")
            #expect(Set(all).count == 200, "every announcement gets its own id")
            #expect(server.stop() == 0)
            // The ones not yet spoken are named in the log at shutdown, not dropped silently.
            #expect(server.log.components(separatedBy: "not spoken (server stopping)").count - 1 >= 150)
        }

        @Test func sigtermMidAnnouncementFinishesItAndExitsZero() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let server = try ServerProcess(pulseServer: sound.address)
            #expect(server.waitForLog("keep-alive stream open"))
            let text = "请保管好您的随身物品，祝您生活愉快"
            #expect(try server.exchange(text + "\n") == ["OK 1"])
            // Wait until the speech is being heard, then stop the server.
            #expect(recorder.waitUntil(timeout: 10) { SignalAnalysis($0, sampleRate: recorder.sampleRate).firstLoudSample() != nil })
            #expect(server.stop(signal: SIGTERM) == 0)
            recorder.record(seconds: 0.5)
            let heard = recorder.analysis.soundingDuration()
            let expected = try renderedSoundingDuration(text)
            #expect(abs(heard - expected) < 0.15 * expected, "heard \(heard) s of \(expected) s")
            #expect(server.log.contains("spoke #1"))
        }

        @Test func refusesAFullQueueWithoutDroppingWhatItAccepted() throws {
            let server = try ServerProcess(arguments: ["--queue", "2"], pulseServer: sound.address)
            let replies = try server.exchange((1...6).map { "\($0)号" }.joined(separator: "\n") + "\n")
            #expect(replies.count == 6)
            #expect(replies.filter { $0.hasPrefix("ERR queue-full ") }.count >= 3)
            let accepted = replies.filter { $0.hasPrefix("OK ") }
            #expect(accepted.count >= 2 && accepted.count <= 3)
            _ = server.stop()
            // Every accepted id was either spoken or named at shutdown.
            for reply in accepted {
                let id = reply.dropFirst(3)
                #expect(server.log.contains("speaking #\(id) ") || server.log.contains("not spoken (server stopping): #\(id) "))
            }
        }
    }
}
