import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// `bobao serve --mqtt` against a private mosquitto on loopback: what is published to the node's, a
    /// group's and everyone's `say` topic is heard at the null sink's monitor; availability follows the
    /// process, through a clean stop and through kill -9 (the Will).
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct MQTTAnnounceTests {
        let sound: TestSoundServer.Connection

        init() throws {
            sound = try TestSoundServer.shared()
        }

        /// A server subscribed to `broker` as node `box-t` in groups front and kitchen, once it has subscribed.
        func start(_ broker: MQTTBroker, _ arguments: [String] = []) throws -> ServerProcess {
            let server = try ServerProcess(
                arguments: ["--mqtt", broker.url, "--node", "box-t", "--group", "front", "--group", "kitchen"] + arguments,
                pulseServer: sound.address)
            #expect(server.waitForLog("MQTT: subscribed to 4 topic(s) at QoS 1"), "\(server.log)")
            return server
        }

        func utterances(_ count: Int, in recorder: MonitorRecorder, timeout: Double = 30) -> [SignalAnalysis.Segment] {
            recorder.waitForUtterances(count, quiet: 0.6, timeout: timeout)
        }

        @Test func theNodeAGroupAndAllAreHeard() throws {
            let broker = try MQTTBroker()
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let server = try start(broker, ["--no-spool"])
            #expect(server.waitForLog("keep-alive stream open"))
            let topics = ["bobao/box-t/say", "bobao/group/kitchen/say", "bobao/all/say"]
            for (index, topic) in topics.enumerated() {
                #expect(try broker.publish(topic, ["一号", "二号", "三号"][index]) == 0)
                #expect(server.waitForLog("accepted #\(index + 1) from mqtt \(topic)"), "\(server.log)")
                // One at a time, so the three are three utterances with the gap between them.
                #expect(server.waitForLog("spoke #\(index + 1)"), "\(server.log)")
            }
            let segments = utterances(3, in: recorder)
            #expect(segments.count == 3, "\(segments)")
            // Another node's and another group's topics are not this box's.
            #expect(try broker.publish("bobao/other/say", "不是我") == 0)
            #expect(try broker.publish("bobao/group/bar/say", "也不是我") == 0)
            #expect(try broker.publish("bobao/all/say", "四号") == 0)
            #expect(server.waitForLog("accepted #4 from mqtt bobao/all/say"), "\(server.log)")
            #expect(!server.log.contains("不是我") && !server.log.contains("也不是我"))
            #expect(server.stop() == 0)
        }

        /// A JSON payload's options apply; a bad payload is logged with its topic and nothing is spoken; the
        /// server goes on serving.
        @Test func jsonOptionsApplyAndBadPayloadsAreRefusedByTopic() throws {
            let broker = try MQTTBroker()
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let server = try start(broker, ["--no-spool"])
            #expect(server.waitForLog("keep-alive stream open"))
            let bad: [(topic: String, payload: [UInt8], problem: String)] = [
                ("bobao/all/say", Array(#"{"text": "半个"#.utf8), "bad-json"),
                ("bobao/box-t/say", Array(#"{"text": "太快", "rate": 9000}"#.utf8), "bad-field rate"),
                ("bobao/group/front/say", [0xE4, 0xBD, 0xFF, 0x0A], "bad-utf8"),
                ("bobao/box-t/say", Array(#"{"cmd": "skip"}"#.utf8), "bad-field cmd"),
                ("bobao/box-t/say", [], "bad-field text"),
            ]
            for message in bad {
                #expect(try broker.publish(message.topic, message.payload) == 0)
                #expect(server.waitForLog("MQTT: refused a message on \(message.topic)"), "\(server.log)")
            }
            for message in bad {
                let line = server.log.split(separator: "\n").first {
                    $0.contains("refused a message on \(message.topic)") && $0.contains(message.problem)
                }
                #expect(line?.contains("nothing was spoken") == true, "\(message.problem): \(server.log)")
            }
            recorder.record(seconds: 0.5)
            #expect(recorder.analysis.soundingDuration() < 0.05, "a refused message was heard")
            #expect(!server.log.contains("accepted #"))
            let json = #"{"text": "请 8 号取餐", "priority": "urgent", "repeat": 2, "id": "order-8"}"#
            #expect(try broker.publish("bobao/group/front/say", json) == 0)
            #expect(server.waitForLog("accepted #1 from mqtt bobao/group/front/say"), "\(server.log)")
            let accepted = server.log.split(separator: "\n").first { $0.contains("accepted #1 from mqtt") } ?? ""
            #expect(accepted.contains("urgent") && accepted.contains("repeat 2"), "\(accepted)")
            let segments = utterances(2, in: recorder)
            #expect(segments.count == 2, "repeat 2 is heard twice: \(segments)")
            // The same id again is a duplicate: not queued twice.
            #expect(try broker.publish("bobao/all/say", json) == 0)
            #expect(server.waitForLog("duplicate of #1 from mqtt bobao/all/say"), "\(server.log)")
            #expect(server.stop() == 0)
        }

        /// A message kept by the broker (published retained) would be said again at every reconnection: it
        /// is refused when it comes from the subscription, with how to clear it.
        @Test func aRetainedSayIsNotSpokenOnSubscribing() throws {
            let broker = try MQTTBroker()
            #expect(try broker.publish("bobao/all/say", Array("留下的".utf8), retain: true) == 0)
            let server = try start(broker, ["--no-spool"])
            #expect(server.waitForLog("refused a message on bobao/all/say"), "\(server.log)")
            #expect(server.log.contains("published retained") && server.log.contains("mosquitto_pub -r -n -t"))
            #expect(!server.log.contains("accepted #"))
            #expect(server.stop() == 0)
        }
    }
}
