import BobaoCore
import Testing

/// `--mqtt`'s URL, the topic names, and how a `say` payload is read.
struct MQTTSettingsTests {
    @Test(arguments: [
        ("mqtt://broker.local", "broker.local", 1883), ("mqtt://10.0.0.5:1884", "10.0.0.5", 1884),
        ("MQTT://[::1]:1885/", "::1", 1885), ("mqtt://[fd00::7]", "fd00::7", 1883),
    ])
    func brokerURLs(url: String, host: String, port: Int) throws {
        let broker = try MQTTSettings.parseBroker(url)
        #expect(broker.host == host && broker.port == port)
    }

    @Test(arguments: [
        ("mqtts://broker:8883", "not supported yet"), ("http://broker", "must be a URL like mqtt://"),
        ("mqtt://user:pw@broker", "--mqtt-user"), ("mqtt://broker:0", "port must be 1 to 65535"),
        ("mqtt://broker/topic", "no path"), ("mqtt://", "names no host"), ("mqtt://[::1", "without closing"),
    ])
    func badBrokerURLsSayWhatToDo(url: String, message: String) {
        #expect(throws: MQTTSettings.Invalid.self) { try MQTTSettings.parseBroker(url) }
        do { _ = try MQTTSettings.parseBroker(url) } catch { #expect(error.description.contains(message), "\(error)") }
    }

    @Test func topicsAndNames() throws {
        var settings = MQTTSettings(host: "b", node: "till-3")
        settings.groups = ["front", "kitchen"]
        settings.prefix = "shop/bobao"
        #expect(settings.sayTopics == ["shop/bobao/till-3/say", "shop/bobao/group/front/say", "shop/bobao/group/kitchen/say",
                                       "shop/bobao/all/say"])
        #expect(settings.availabilityTopic == "shop/bobao/till-3/availability" && settings.clientID == "bobao-till-3")
        for bad in ["a/b", "a+", "#", "", "a b"] {
            #expect(throws: MQTTSettings.Invalid.self) { try MQTTSettings.checkLevel(bad, what: "node") }
        }
        try MQTTSettings.checkLevel("收银台-1", what: "node")
        for bad in ["/bobao", "bobao/", "a//b", "a/+"] {
            #expect(throws: MQTTSettings.Invalid.self) { try MQTTSettings.checkPrefix(bad) }
        }
    }

    @Test func payloadsAreReadLikeLines() throws {
        let read = { (text: String) in MQTTPayload.read(Array(text.utf8), commandTopic: "bobao/n/cmd") }
        #expect(try read("  请 3 号\r\n").get().text == "请 3 号")
        #expect(try read("\u{FEFF}第一行\n第二行").get().text == "第一行 第二行")
        let json = try read(#"{"text": "取餐", "priority": "urgent", "ttl": 30, "id": "a-1"}"#).get()
        #expect(json.text == "取餐" && json.options.priority == .urgent && json.options.clientID == "a-1")
        #expect(json.options.ttlSeconds == 30)
        func code(_ result: Result<Submission, LineProtocol.Refusal>) -> String? {
            if case .failure(let refusal) = result { return refusal.code + " " + refusal.reason } else { return nil }
        }
        #expect(code(read(#"{"text": "#))?.hasPrefix("bad-json") == true)
        #expect(code(read(#"{"cmd": "skip"}"#))?.contains("bobao/n/cmd") == true)
        #expect(code(read(#"{"text": "x", "wait": true}"#))?.hasPrefix("bad-field wait") == true)
        #expect(code(read(""))?.hasPrefix("bad-field text") == true)
        #expect(code(read("   "))?.hasPrefix("bad-field text") == true)
        #expect(code(MQTTPayload.read([0xFF, 0x41], commandTopic: "c"))?.hasPrefix("bad-utf8") == true)
        #expect(code(read("a\u{7}b")) == "bad-field text holds control characters")
    }
}
