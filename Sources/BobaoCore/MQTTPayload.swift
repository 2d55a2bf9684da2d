/// An MQTT message on a `say` topic read into the `Submission` a line would give: plain UTF-8 text (line
/// breaks become spaces, as in an HTTP body), or the line protocol's JSON object with its options. The
/// same checks and refusals as the line and HTTP ports.
public enum MQTTPayload {
    /// - Parameter commandTopic: named in the refusal of a JSON command.
    public static func read(_ payload: [UInt8], rules: MessageRules = MessageRules(), commandTopic: String)
        -> Result<Submission, LineProtocol.Refusal>
    {
        var bytes = payload[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }  // a byte-order mark is no text
        let isJSON = bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == UInt8(ascii: "{")
        let members: [JSONValue.Member]
        switch HTTPAnnouncement.fields(
            contentType: isJSON ? "application/json" : "text/plain", body: Array(bytes), query: [], plainField: "text",
            defaultCharset: "UTF-8")
        {
        case .failure(let failure):
            // Only a charset problem can come from plain text or JSON: the payload is not valid UTF-8.
            return .failure(failure.code == "bad-json" || failure.code == "bad-field"
                ? LineProtocol.Refusal(code: failure.code, reason: failure.message) : .badUTF8)
        case .success(let given):
            members = given
        }
        if members.contains(where: { $0.name == "cmd" }) {
            return .failure(.badField(
                "cmd", "commands are not taken on say topics (\(commandTopic) is planned, not served yet)"))
        }
        if members.contains(where: { $0.name == "wait" }) {
            return .failure(.badField("wait", "has no meaning over MQTT (nothing can answer a publish)"))
        }
        guard members.contains(where: { $0.name == "text" }) else {
            return .failure(.badField("text", isJSON ? "missing" : "missing: the message is empty"))
        }
        switch JSONRequest.request(fields: members, rules: rules) {
        case .submission(let submission): return .success(submission)
        case .invalid(let refusal): return .failure(refusal)
        default: return .failure(.badField("text", "missing"))
        }
    }
}
