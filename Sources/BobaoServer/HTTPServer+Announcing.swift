import BobaoCore
import Synchronization

/// `POST /announce` (answered `202` once accepted, or with `?wait=1` `200` once it has ended) and
/// `GET /events`.
extension HTTPServer {
    /// Submits the announcement as the line port would, and answers the exchange from the replies.
    func announce(_ submission: Submission, _ exchange: HTTPExchange) {
        let seen = Mutex(Seen())
        let key = submission.options.clientID.map(JSONText.quote) ?? "null"
        services.submit(submission, exchange.peer) { [weak exchange] reply in
            guard let exchange else { return }
            switch reply {
            case .refused(let refusal):
                exchange.deliver(.failure(HTTPFailure(refusal)))
            case .accepted(let number, let duplicate, let watching):
                seen.withLock { $0.number = number; $0.duplicate = duplicate }
                guard !watching else { return }
                exchange.deliver(.json(202, "{\"number\":\(number),\"id\":\(key),\"duplicate\":\(duplicate)}\n"))
            case .event(let line, let final):
                let event = Self.eventFields(line)
                let now = seen.withLock { seen -> Seen in
                    seen.events.append(event.name)
                    return seen
                }
                guard final else { return }
                exchange.deliver(.json(200, now.outcomeBody(key: key, outcome: event.name, reason: event.reason)))
            case .unwatched:
                exchange.deliver(.json(200, seen.withLock { $0 }.outcomeBody(key: key, outcome: nil, reason: nil)))
            case .answered(let text):
                exchange.deliver(Self.commandResponse(text))
            }
        }
    }

    /// What a waiting request has heard of its announcement so far.
    struct Seen: Sendable {
        var number: UInt64?
        var duplicate = false
        var events: [String] = []

        /// `{"number": 12, "id": …, "duplicate": false, "outcome": "done", "reason": null, "events": ["start", "done"]}`.
        func outcomeBody(key: String, outcome: String?, reason: String?) -> String {
            "{\"number\":\(number.map(String.init) ?? "null"),\"id\":\(key),\"duplicate\":\(duplicate),\"outcome\":"
                + (outcome.map(JSONText.quote) ?? "null") + ",\"reason\":" + (reason.map(JSONText.quote) ?? "null")
                + ",\"events\":[\(events.map(JSONText.quote).joined(separator: ","))]}\n"
        }
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
