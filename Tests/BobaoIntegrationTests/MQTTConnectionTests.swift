import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// The connection to the broker: availability, a broker that is down or comes later, wrong credentials.
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct MQTTConnectionTests {
        let sound: TestSoundServer.Connection
        let availability = "bobao/box-c/availability"

        init() throws {
            sound = try TestSoundServer.shared()
        }

        func start(_ url: String, _ arguments: [String] = [], environment: [String: String] = [:]) throws -> ServerProcess {
            try ServerProcess(arguments: ["--no-spool", "--mqtt", url, "--node", "box-c"] + arguments,
                              pulseServer: sound.address, environment: environment)
        }

        /// `online` retained once connected; `offline` after SIGTERM (published by Bobao) and after kill -9
        /// (the broker's Last Will).
        @Test(arguments: [SIGTERM, SIGKILL]) func availabilityFollowsTheProcess(signal: Int32) throws {
            let broker = try MQTTBroker()
            let server = try start(broker.url)
            #expect(server.waitForLog("MQTT: subscribed"), "\(server.log)")
            #expect(try broker.firstMessage(availability) == "online")
            // A subscriber that sees the retained `online`, then what follows it.
            let watcher = try broker.subscriber(availability, count: 2)
            #expect(watcher.readLines(1) == ["online"])
            let status = server.stop(signal: signal)
            #expect(status == (signal == SIGTERM ? 0 : 128 + SIGKILL))
            #expect(watcher.readLines(1) == ["offline"], "\(server.log)\n\(broker.log)")
            #expect(try broker.firstMessage(availability) == "offline", "retained")
            if signal == SIGTERM {
                #expect(server.log.contains("MQTT: disconnected from 127.0.0.1:\(broker.port); \(availability) is offline"))
                #expect(broker.log.contains("Client bobao-box-c disconnected.") , "a clean disconnect, not the Will")
            }
        }

        /// With no broker the line port serves as ever, and Bobao connects once the broker comes: what is
        /// then published is heard.
        @Test func theLinePortWorksWithoutTheBrokerAndBobaoConnectsWhenItComes() throws {
            let port = try MQTTBroker.freePort()
            let server = try start("mqtt://127.0.0.1:\(port)")
            #expect(server.waitForLog("MQTT: cannot connect to 127.0.0.1:\(port) (Connection refused); retrying with back-off"),
                    "\(server.log)")
            #expect(try server.exchange("线路照常\n") == ["OK 1"])
            let broker = try MQTTBroker(port: port)
            #expect(server.waitForLog("MQTT: subscribed", timeout: 40), "\(server.log)")
            #expect(server.log.contains("MQTT: connected to 127.0.0.1:\(port) as bobao-box-c (new session) after "))
            #expect(server.log.components(separatedBy: "MQTT: cannot connect").count == 2, "one line, not one per attempt")
            #expect(try broker.publish("bobao/box-c/say", "来了") == 0)
            #expect(server.waitForLog("accepted #2 from mqtt bobao/box-c/say"), "\(server.log)")
            // The broker going away is a warning, and the line port still serves.
            broker.stop()
            #expect(server.waitForLog("MQTT: lost the connection to 127.0.0.1:\(port)"), "\(server.log)")
            #expect(try server.exchange("还在\n") == ["OK 3"])
            #expect(server.stop() == 0)
        }

        /// Wrong credentials: one clear error line, retries with back-off, no crash; the right ones connect.
        @Test func wrongCredentialsAreOneClearLineAndRetries() throws {
            let broker = try MQTTBroker(users: ["kiosk": "right-password"])
            let wrong = try start(broker.url, ["--mqtt-user", "kiosk"], environment: ["BOBAO_MQTT_PASSWORD": "wrong"])
            #expect(broker.waitForLog("not authorised", count: 2, timeout: 15), "retried: \(broker.log)")
            let lines = wrong.log.split(separator: "\n").filter { $0.contains("refused Bobao's credentials") }
            #expect(lines.count == 1, "\(wrong.log)")
            #expect(lines.first?.contains("error: MQTT: the broker at 127.0.0.1:\(broker.port) refused Bobao's credentials") == true)
            #expect(lines.first?.contains("BOBAO_MQTT_PASSWORD") == true)
            #expect(try wrong.exchange("照常\n") == ["OK 1"])
            #expect(wrong.stop() == 0)
            let right = try start(broker.url, ["--mqtt-user", "kiosk"], environment: ["BOBAO_MQTT_PASSWORD": "right-password"])
            #expect(right.waitForLog("MQTT: subscribed"), "\(right.log)")
            #expect(right.stop() == 0)
        }
    }
}
