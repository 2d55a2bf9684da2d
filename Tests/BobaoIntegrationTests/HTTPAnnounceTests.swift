import BobaoCore
import BobaoSpeech
import BobaoTestSupport
import Foundation
import Synchronization
import Testing

extension SoundSuites {
    /// `POST /announce` against a real `bobao serve --http`, heard at the null sink's monitor.
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct HTTPAnnounceTests {
        let sound: TestSoundServer.Connection

        init() throws {
            sound = try TestSoundServer.shared()
        }

        func start(_ arguments: [String] = []) throws -> (ServerProcess, UInt16) {
            try ServerProcess.withHTTP(arguments, sound: sound)
        }

        func utterances(_ count: Int, in recorder: MonitorRecorder, timeout: Double = 30) -> [SignalAnalysis.Segment] {
            recorder.waitForUtterances(count, quiet: 0.6, timeout: timeout)
        }

        @Test func aPostedPlainTextIsAcceptedAndHeard() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let (server, port) = try start()
            #expect(server.waitForLog("keep-alive stream open"))
            let reply = try HTTPCall.send("POST", "/announce", port: port, headers: [("Content-Type", "text/plain")], text: "新客户来了")
            #expect(reply.status == 202, "\(reply)")
            #expect(reply.number("number") == 1 && reply.header("Content-Type")?.hasPrefix("application/json") == true)
            let segments = utterances(1, in: recorder)
            #expect(segments.count == 1, "\(segments)")
            let heard = recorder.analysis.soundingDuration()
            #expect(heard > 0.8, "heard \(heard) s of speech")
            #expect(server.log.contains("accepted #1 from 127.0.0.1:"))
            #expect(server.stop() == 0)
        }

        /// `?wait=1` answers once the speech has been heard to its end, with the outcome and the events.
        @Test func waitAnswersAfterTheSpeechEnds() throws {
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let (server, port) = try start()
            #expect(server.waitForLog("keep-alive stream open"))
            let body = #"{"text": "请 12 号顾客到 3 号窗口", "id": "ticket-12"}"#
            let reply = try HTTPCall.send("POST", "/announce?wait=1", port: port,
                                          headers: [("Content-Type", "application/json")], text: body)
            let heardByThen = recorder.analysis
            #expect(reply.status == 200, "\(reply)")
            #expect(reply.string("outcome") == "done" && reply.string("id") == "ticket-12", "\(reply.body)")
            #expect(reply.json["events"] == .array([.string("start"), .string("done")]), "\(reply.body)")
            // Everything was heard before the answer came: nothing sounds after it.
            let spoken = heardByThen.soundingDuration()
            #expect(spoken > 1.0, "only \(spoken) s heard when the answer came")
            recorder.record(seconds: 0.5)
            #expect(recorder.analysis.soundingDuration() - spoken < 0.05, "speech went on after the answer")
            #expect(server.stop() == 0)
        }

        /// A form, a GBK body, a GET URL and JSON options all arrive as the text that was sent.
        @Test func formsCharsetsAndURLsAreRead() throws {
            let (server, port) = try start(["--no-spool", "--ttl", "30"])
            let form = "text=" + "订单 12 号".addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "&priority=urgent&repeat=2"
            let formReply = try HTTPCall.send("POST", "/announce", port: port,
                                              headers: [("Content-Type", "application/x-www-form-urlencoded")], text: form)
            #expect(formReply.status == 202, "\(formReply)")
            let gbk = try #require(TextEncoding.gbk.utf8(from: [0xC4, 0xE3, 0xBA, 0xC3]))  // 你好 in GBK
            #expect(String(decoding: gbk, as: UTF8.self) == "你好")
            let gbkReply = try HTTPCall.send("POST", "/announce", port: port,
                                             headers: [("Content-Type", "text/plain; charset=GBK")], body: [0xC4, 0xE3, 0xBA, 0xC3])
            #expect(gbkReply.status == 202, "\(gbkReply)")
            let url = "/announce?text=" + "欢迎光临".addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "&priority=low"
            #expect(try HTTPCall.send("GET", url, port: port).status == 202)
            let curlStyle = try HTTPCall.send("POST", "/announce", port: port,
                                              headers: [("Content-Type", "application/x-www-form-urlencoded")], text: "取餐")
            #expect(curlStyle.status == 202, "curl -d 'text' sends a form of only text: \(curlStyle)")
            let history = try HTTPCall.send("GET", "/announcements", port: port)
            #expect(history.status == 200)
            guard case .array(let entries)? = history.json["announcements"] else {
                Issue.record("no announcements in \(history.body)")
                return
            }
            let texts = entries.compactMap { entry -> String? in
                guard case .object(let members) = entry, case .string(let text)? = members.first(where: { $0.name == "text" })?.value
                else { return nil }
                return text
            }
            #expect(Set(texts) == ["订单 12 号", "你好", "欢迎光临", "取餐"], "\(texts)")
            #expect(server.log.contains("(urgent, repeat 2)") || server.log.contains("urgent"), "\(server.log)")
            #expect(server.stop() == 0)
        }

        /// 200 clients posting at once all get 202, with 200 different numbers, and every one is accounted for.
        @Test(arguments: [false, true]) func twoHundredConcurrentPostsAreAllAccepted(spool: Bool) throws {
            let (server, port) = try start(["--queue", "400"] + (spool ? [] : ["--no-spool"]))
            let replies = Mutex<[HTTPCall?]>(Array(repeating: nil, count: 200))
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for index in 0..<200 {
                group.enter()
                Thread {
                    start.wait()
                    let reply = try? HTTPCall.send("POST", "/announce", port: port,
                                                   headers: [("Content-Type", "text/plain")], text: "第 \(index) 位")
                    replies.withLock { $0[index] = reply }
                    group.leave()
                }.start()
            }
            for _ in 0..<200 { start.signal() }
            #expect(group.wait(timeout: .now() + 60) == .success)
            let all = replies.withLock { $0 }
            let statuses = all.map { $0?.status ?? -1 }
            #expect(statuses.allSatisfy { $0 == 202 }, "\(Dictionary(grouping: statuses, by: { $0 }).mapValues(\.count))")
            let numbers = Set(all.compactMap { $0?.number("number") })
            #expect(numbers == Set((1...200).map(Double.init)), "\(numbers.count) distinct numbers")
            let status = try HTTPCall.send("GET", "/status", port: port)
            guard case .object(let counters)? = status.json["counters"],
                  case .number(let accepted)? = counters.first(where: { $0.name == "accepted" })?.value else {
                Issue.record("no counters in \(status.body)")
                return
            }
            #expect(accepted == 200)
            let cleared = try HTTPCall.send("POST", "/clear", port: port)
            #expect(cleared.status == 200 && cleared.string("reply")?.hasPrefix("cleared ") == true, "\(cleared.body)")
            _ = try HTTPCall.send("POST", "/skip", port: port)
            // None is lost: every one of the 200 ends with an outcome (spoken, or cancelled by the clear or skip).
            let deadline = Date().addingTimeInterval(30)
            var ended = 0.0
            while Date() < deadline {
                let now = try HTTPCall.send("GET", "/status", port: port)
                guard case .object(let members)? = now.json["counters"] else { break }
                ended = ["done", "cancelled", "cut"].reduce(0.0) { total, name in
                    if case .number(let value)? = members.first(where: { $0.name == name })?.value { return total + value }
                    return total
                }
                if ended >= 200 { break }
                _ = server.waitFor(timeout: 0.5) { $0.contains("cancelled #") && $0.contains("stopped #") }
            }
            #expect(ended == 200, "\(ended) of 200 ended")
            #expect(server.stop() == 0)
        }
    }
}
