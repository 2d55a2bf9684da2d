import BobaoCore
import Synchronization

/// `POST /announce` (answered `202` once accepted, or with `?wait=1` `200` once it has ended) and
/// `GET /events`.
extension HTTPServer {
    /// Submits the announcement as the line port would, and answers the exchange from the replies.
    func announce(_ submission: Submission, _ exchange: HTTPExchange) {
        let events = Mutex<[String]>([])
        let key = submission.options.clientID.map(JSONText.quote) ?? "null"
        services.submit(submission, exchange.peer) { [weak exchange] reply in
            guard let exchange else { return }
            switch reply {
            case .refused(let refusal):
                exchange.deliver(.failure(HTTPFailure(refusal)))
            case .accepted(let number, let duplicate, let watching):
                events.withLock { $0 = ["number:\(number)", "duplicate:\(duplicate)"] }
                guard !watching else { return }
                exchange.deliver(.json(202, "{\"number\":\(number),\"id\":\(key),\"duplicate\":\(duplicate)}\n"))
            case .event(let line, let final):
                let event = Self.eventFields(line)
                let seen = events.withLock { events -> [String] in
                    events.append(event.name)
                    return events
                }
                guard final else { return }
                exchange.deliver(.json(200, Self.outcomeBody(seen, key: key, outcome: event.name, reason: event.reason)))
            case .unwatched:
                let seen = events.withLock { $0 }
                exchange.deliver(.json(200, Self.outcomeBody(seen, key: key, outcome: nil, reason: nil)))
            case .answered(let text):
                exchange.deliver(Self.commandResponse(text))
            }
        }
    }

    /// `{"number": 12, "id": …, "duplicate": false, "outcome": "done", "reason": null, "events": ["start", "done"]}`.
    /// `seen` starts with the `number:` and `duplicate:` the acceptance gave.
    static func outcomeBody(_ seen: [String], key: String, outcome: String?, reason: String?) -> String {
        let number = seen.first { $0.hasPrefix("number:") }.map { String($0.dropFirst(7)) } ?? "null"
        let duplicate = seen.first { $0.hasPrefix("duplicate:") }.map { String($0.dropFirst(10)) } ?? "false"
        let names = seen.filter { !$0.contains(":") }.map(JSONText.quote).joined(separator: ",")
        return "{\"number\":\(number),\"id\":\(key),\"duplicate\":\(duplicate),\"outcome\":"
            + (outcome.map(JSONText.quote) ?? "null") + ",\"reason\":" + (reason.map(JSONText.quote) ?? "null")
            + ",\"events\":[\(names)]}\n"
    }

    /// The event's name and reason, from its JSON line.
    static func eventFields(_ line: String) -> (name: String, reason: String?) {
        guard case .object(let members)? = try? JSONValue.parse(line) else { return ("?", nil) }
        var name = "?", reason: String?
        for member in members {
            if member.name == "event", case .string(let value) = member.value { name = value }
            if member.name == "reason", case .string(let value) = member.value { reason = value }
        }
        return (name, reason)
    }

    /// Names an open stream in `streams`.
    final class StreamKey: Hashable, Sendable {
        static func == (a: StreamKey, b: StreamKey) -> Bool { a === b }
        func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    }

    /// `GET /events`: the stream starts with the status, then follows the activity feed.
    func openStream(_ exchange: HTTPExchange) -> RouteResult {
        let (open, fromPeer) = streams.withLock { streams in
            (streams.count, streams.values.filter { $0.host == exchange.host }.count)
        }
        guard open < settings.maximumEventStreams else {
            return .now(refuse(exchange, HTTPFailure(status: 503, code: "busy",
                message: "\(settings.maximumEventStreams) event streams are open already")))
        }
        // One machine cannot take every stream (the shop owner's phone must still get one); loopback may.
        let perAddress = max(1, settings.maximumEventStreams / 4)
        guard exchange.isLoopback || fromPeer < perAddress else {
            return .now(refuse(exchange, HTTPFailure(status: 503, code: "busy",
                message: "this address has \(fromPeer) event streams open already, the most one address may have")))
        }
        let subscription = Mutex<UInt64?>(nil)
        let key = StreamKey()
        let services = self.services
        let stream = HTTPEventStream(connection: exchange.connection, host: exchange.host) { [weak self] in
            if let id = subscription.withLock({ $0.take() }) { services.unsubscribe(id) }
            self?.streams.withLock { $0[key] = nil }
        }
        streams.withLock { $0[key] = stream }
        stream.send("retry: 3000\n\n")
        let id = services.subscribe { [weak stream] text in stream?.send(text) }
        subscription.withLock { $0 = id }
        if stopping.load(ordering: .sequentiallyConsistent) { stream.end() }
        return .stream(stream)
    }
}
