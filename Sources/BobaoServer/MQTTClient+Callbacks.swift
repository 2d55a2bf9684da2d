import BobaoCore
import BobaoPlatform
import CMosquitto
import Glibc

// libmosquitto's callbacks, all on the loop thread; each finds its client through the user data.

private func client(_ pointer: UnsafeMutableRawPointer?) -> MQTTClient {
    Unmanaged<MQTTClient>.fromOpaque(pointer!).takeUnretainedValue()
}

let mqttConnected: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32) -> Void = {
    _, data, code, flags in
    client(data).connected(code: code, sessionPresent: flags & 1 != 0)
}

let mqttDisconnected: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Void = { _, data, status in
    client(data).disconnected(status: status)
}

let mqttMessage: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafePointer<mosquitto_message>?) -> Void = {
    _, data, message in
    guard let message = message?.pointee, let topic = message.topic else { return }
    let payload = message.payloadlen > 0 && message.payload != nil
        ? Array(UnsafeRawBufferPointer(start: message.payload, count: Int(message.payloadlen))) : []
    client(data).received(topic: String(cString: topic), payload: payload, mid: message.mid, retained: message.retain)
}

let mqttSubscribed: @convention(c) (
    OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, UnsafePointer<Int32>?
) -> Void = {
    _, data, _, count, granted in
    let levels = granted.map { Array(UnsafeBufferPointer(start: $0, count: Int(count))) } ?? []
    client(data).subscribed(granted: levels)
}

let mqttPublished: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Void = { _, data, mid in
    client(data).published(mid: mid)
}

extension MQTTClient {
    func connected(code: Int32, sessionPresent: Bool) {
        guard code == 0 else {
            // 4: bad user name or password; 5: not authorised. Either is a matter of credentials.
            var why = String(cString: bobao_mosquitto_connack_string(code))  // "Connection Refused: not authorised."
            if why.hasPrefix("Connection Refused: ") { why = String(why.dropFirst(20)) }
            if why.hasSuffix(".") { why = String(why.dropLast()) }
            return connectionFailed("CONNACK \(code): \(why)", credentials: code == 4 || code == 5)
        }
        isConnected = true
        backoffSeconds = Self.firstBackoff
        let after = [connectionFault.resolved(), credentialFault.resolved()].compactMap { $0 }.first
        log("MQTT: connected to \(settings.brokerDescription) as \(settings.clientID) "
            + (sessionPresent ? "(session resumed)" : "(new session)") + (after.map { " \($0)" } ?? ""))
        // `online` before the subscription, so that by the SUBACK the broker holds it.
        let online = Array("online".utf8)
        _ = bobao_mosquitto_publish(handle, nil, settings.availabilityTopic, Int32(online.count), online, 1, true)
        let topics = settings.sayTopics
        let pointers: [UnsafeMutablePointer<CChar>?] = topics.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        let status = pointers.withUnsafeBufferPointer { buffer in
            bobao_mosquitto_subscribe_multiple(handle, nil, Int32(topics.count), buffer.baseAddress, 1, 0, nil)
        }
        if status != MOSQ_ERR_SUCCESS.rawValue {
            log(LogPriority.error
                + "MQTT: could not subscribe to \(topics.joined(separator: ", ")): \(Self.describe(status))")
        }
    }

    func disconnected(status: Int32) {
        let wasConnected = isConnected
        isConnected = false
        guard !isStopping, reconnectAt == nil else { return }
        guard wasConnected else { return connectionFailed(Self.describe(status)) }
        // Not yet a failed attempt: the first try comes after the shortest back-off.
        log(LogPriority.warning
            + "MQTT: lost the connection to \(settings.brokerDescription) (\(Self.describe(status))); "
            + "reconnecting; messages for this box wait in the broker meanwhile")
        reconnectAt = WallClock.monotonicSeconds() + Self.firstBackoff
        backoffSeconds = Self.firstBackoff * 2
    }

    func subscribed(granted: [Int32]) {
        let topics = settings.sayTopics
        let refused = zip(topics, granted).filter { $0.1 > 2 }.map(\.0)
        if refused.isEmpty {
            log("MQTT: subscribed to \(topics.count) topic(s) at QoS 1; \(settings.availabilityTopic) is online")
        } else {
            log(LogPriority.error + "MQTT: the broker refused the subscription to \(refused.joined(separator: ", ")) "
                + "(its ACL?); nothing published there is heard")
        }
    }

    func published(mid: Int32) {
        if mid == offlineMid { offlineAcknowledged = true }
    }

    /// A message on a `say` topic: read like a line and submitted; a refusal is logged with its topic.
    func received(topic: String, payload: [UInt8], mid: Int32, retained: Bool) {
        guard !retained else {
            // Delivered because it was kept, not because it was just sent: it would be said again at every
            // reconnection.
            return refuse(topic: topic, mid: mid, code: "retained",
                "it was published retained (said at every reconnection otherwise); "
                + "clear it with mosquitto_pub -r -n -t '\(topic)'")
        }
        guard settings.sayTopics.contains(topic) else {
            return refuse(topic: topic, mid: mid, code: "unknown-topic",
                "not one of this box's topics (a group removed since the session began?)")
        }
        let submission: Submission
        switch MQTTPayload.read(payload, rules: rules, commandTopic: "\(settings.prefix)/\(settings.node)/cmd") {
        case .failure(let refusal):
            return refuse(topic: topic, mid: mid, code: refusal.code, "\(refusal.code) \(refusal.reason)")
        case .success(let read):
            submission = read
        }
        submit(submission, "mqtt \(topic)") { [self] reply in
            switch reply {
            case .refused(let refusal):
                refuse(topic: topic, mid: mid, code: refusal.code, "\(refusal.code) \(refusal.reason)")
            case .accepted:
                _ = refusals.withLock { $0.resolved() }  // the next refusal is logged as it comes again
            default:
                break
            }
        }
    }

    /// `refused a message on bobao/all/say (mid 7): bad-json …; nothing was spoken`, the first ten in a row
    /// one by one, then summed up.
    func refuse(topic: String, mid: Int32, code: String, _ why: String) {
        refused(code)
        let line = refusals.withLock {
            $0.occurred("MQTT: refused a message on \(topic) (mid \(mid)): \(why); nothing was spoken")
        }
        if let line { log(LogPriority.warning + line) }
    }
}
