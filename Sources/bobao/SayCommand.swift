import BobaoCore
import BobaoPlatform
import BobaoSpeech
import Dispatch

/// `bobao say TEXT…`: sends an announcement (or stdin, line by line) to a running server and prints its
/// replies; with `--wait`, each announcement's outcome too. Exit status: 0 when every line was accepted
/// (with `--wait`: every announcement ended `done`), 1 otherwise, 2 for a usage error.
enum SayCommand {
    static let usage = """
        usage: bobao say [OPTIONS] [TEXT…]   (no TEXT, or -: one announcement per line of stdin)
        \(CommandClient.optionsUsage)
          --priority P          urgent (cuts in at once), normal (the default) or low (dropped when newer
                                work arrives while it waits)
          --repeat N            say it N times, 1 to 5
          --chime NAME          a chime first: ding (built in) or voices/chimes/NAME.wav on the server;
                                on: the server's --chime, else the built-in one; off (or --no-chime): none
          --voice NAME          a voice for this announcement (default: the server's --voice)
          --rate WPM            80 to 450 words a minute
          --pitch N             0 to 99
          --volume N            0 to 100 percent
          --id KEY              the client's key: the same key again within 10 minutes is answered
                                OK <n> duplicate and not spoken again (TEXT only, not stdin)
          --ttl SECONDS         not spoken unless its turn comes within this long, 1 to 2592000
          --max-speech SECONDS  cut after this much speech, 1 to 3600
          --wait                print each announcement's outcome (#12 done, #12 failed: …) once it has one
          --encoding E          the server's --encoding (utf-8, gbk, gb18030): with gbk or gb18030 every
                                line goes as JSON, which is ASCII and reads the same in any of them
          --json                print replies and events as JSON objects, one a line:
                                {"ok":true,"number":12}, {"ok":false,"code":"…","reason":"…"}, events as sent
        Any of these options (and TEXT starting with { or AUTH) sends JSON lines, other TEXT plain lines.
        Exit status: 0 if every line was accepted (with --wait: every announcement ended done; a duplicate
        whose outcome the server no longer knows does not count as done), 1 otherwise, 2 for bad usage.
        """

    static let valuedOptions: Set<String> = [
        "priority", "repeat", "chime", "voice", "rate", "pitch", "volume", "id", "ttl", "max-speech", "encoding",
    ]
    static let switches: Set<String> = ["no-chime", "wait", "json"]

    static func run(_ arguments: [String]) throws {
        let args = try Arguments(
            arguments, valued: CommandClient.valuedOptions.union(valuedOptions), switches: switches)
        let (options, wait) = try announcementOptions(args)
        let json = args.flag("json")
        if let name = args.string("encoding"), TextEncoding(name: name) == nil {
            throw CommandError.usage("--encoding: unknown encoding '\(name)' (\(TextEncoding.names))")
        }
        // Plain lines go as UTF-8; JSON lines are ASCII, which a GBK server reads as well.
        let plainIsUTF8 = args.string("encoding").flatMap { TextEncoding(name: $0) } ?? .utf8 == .utf8
        let sendsJSON = valuedOptions.contains { $0 != "encoding" && args.string($0) != nil }
            || switches.contains { args.flag($0) } || !plainIsUTF8
        let readsStandardInput = args.positional.isEmpty || args.positional == ["-"]
        if !readsStandardInput && args.positional.joined().allSatisfy(\.isWhitespace) {
            throw CommandError.usage("empty TEXT: nothing to say")
        }
        if args.positional.isEmpty && StandardStreams.inputIsTerminal {
            StandardStreams.writeError("bobao say: reading announcements from the terminal, one a line; end with Ctrl-D\n")
        }
        if options.clientID != nil && readsStandardInput {
            throw CommandError.usage("--id names one announcement: give its TEXT as arguments, not on standard input")
        }

        let client = try CommandClient(args, command: "say")
        // Replies are read on their own thread while lines are still being sent.
        let reader = SayReader(client, json: json, wait: wait)
        var sent = 0
        var sendError: Error?
        func send(_ line: String) -> Bool {
            let text = line.trimmingWhitespace()
            guard !text.isEmpty else { return true }  // the server ignores blank lines and sends no reply
            // A plain line starting with `{` or `AUTH ` would be read as JSON or as AUTH: such text goes as JSON.
            let asJSON = sendsJSON || text.hasPrefix("{") || text.hasPrefix("AUTH ")
            do {
                try client.send(asJSON ? jsonLine(Submission(text: text, options: options, wait: wait)) : text)
            } catch {
                sendError = error
                return false
            }
            sent += 1
            return true
        }
        if readsStandardInput {
            while let line = readLine(strippingNewline: true), send(line) {}
        } else {
            _ = send(args.positional.joined(separator: " "))
        }
        client.finishSending()
        let result = reader.wait()
        if sent == 0 && sendError == nil && result.connectionRefusal == nil {
            throw CommandError(description: "standard input held no text: nothing was said")
        }

        if let refusal = result.connectionRefusal { throw client.turnedAway(refusal, nothingSpoken: true) }
        var problems: [String] = []
        if let notice = result.closedIdle {
            problems.append("the server at \(client.target) closed the connection (\(notice))")
        } else if let sendError {
            problems.append("\(sendError)")
        }
        if result.messages.count < sent {
            problems.append("the server at \(client.target) closed the connection after \(result.messages.count) of \(sent) replies")
        }
        let refused = result.messages.filter { $0.refused }.count
        if refused > 0 { problems.append("\(refused) of \(sent) line(s) refused") }
        if wait {
            let accepted = result.messages.filter { !$0.refused }
            for message in accepted where message.outcome == nil && !json {
                let number = message.number.map { "#\($0)" } ?? "(no number)"
                StandardStreams.writeOutput(number + (message.duplicate
                    ? " duplicate: the server no longer knows how the first one ended; not spoken again\n"
                    : " no outcome: the connection closed before it ended\n"))
            }
            let notDone = accepted.filter { $0.outcome != .done }.count
            if notDone > 0 { problems.append("\(notDone) of \(accepted.count) accepted announcement(s) did not end done") }
        }
        if !problems.isEmpty { throw CommandError(description: problems.joined(separator: "; ")) }
    }

    /// The options as a `Submission` takes them, each checked here: a bad value is a usage error (exit 2)
    /// naming the flag and what it takes, before anything is sent.
    static func announcementOptions(_ args: Arguments) throws -> (MessageOptions, wait: Bool) {
        var options = MessageOptions()
        if let priority = try args.choice("priority", of: Priority.allCases.map(\.rawValue)) {
            options.priority = Priority(rawValue: priority)!
        }
        let repeats = MessageOptions.repeatRange
        if let count = try args.int("repeat", in: repeats.lowerBound...repeats.upperBound, "times") { options.repeatCount = count }
        if let chime = args.string("chime") {
            guard !args.flag("no-chime") else { throw CommandError.usage("--chime and --no-chime contradict each other") }
            switch chime {
            case "on": options.chime = .on
            case "off": options.chime = .off
            default:
                guard VoiceCatalog.isValidName(chime) else {
                    throw CommandError.usage("--chime must be on, off or a chime name (ding, or NAME of voices/chimes/NAME.wav: "
                        + "letters, digits, - _ + . up to 64 bytes), not '\(chime)'")
                }
                options.chime = .named(chime)
            }
        } else if args.flag("no-chime") {
            options.chime = .off
        }
        if let voice = args.string("voice") {
            guard VoiceCatalog.isValidName(voice) else {
                throw CommandError.usage("--voice must be a voice name (letters, digits, - _ + . up to 64 bytes), not '\(voice)'")
            }
            options.voice = voice
        }
        options.rate = try args.int("rate", in: SpeechParameters.rateRange, "words a minute")
        options.pitch = try args.int("pitch", in: SpeechParameters.pitchRange, "")
        options.volume = try args.int("volume", in: MessageOptions.messageVolumeRange, "percent")
        if let key = args.string("id") {
            guard !key.isEmpty, key.utf8.count <= MessageRules.maximumIDBytes,
                  !key.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
                throw CommandError.usage("--id must be 1 to \(MessageRules.maximumIDBytes) bytes of text without control characters")
            }
            options.clientID = key
        }
        options.ttlSeconds = try args.int("ttl", in: 1...30 * 86_400, "seconds").map(Double.init)
        options.maximumSpeechSeconds = try args.int("max-speech", in: 1...3600, "seconds").map(Double.init)
        return (options, args.flag("wait"))
    }

    /// `{"text":"…","priority":"urgent",…}` with only what differs from the server's defaults. Every string
    /// goes through `JSONText.quote`, so the line is ASCII and reads the same whatever the server's `--encoding`.
    static func jsonLine(_ submission: Submission) -> String {
        let options = submission.options
        var fields = ["\"text\":" + JSONText.quote(submission.text)]
        func add(_ name: String, _ value: String?) {
            if let value { fields.append("\"\(name)\":\(value)") }
        }
        add("priority", options.priority == .normal ? nil : JSONText.quote(options.priority.rawValue))
        add("repeat", options.repeatCount == 1 ? nil : String(options.repeatCount))
        switch options.chime {
        case .serverDefault: break
        case .on: add("chime", "true")
        case .off: add("chime", "false")
        case .named(let name): add("chime", JSONText.quote(name))
        }
        add("voice", options.voice.map(JSONText.quote))
        add("rate", options.rate.map(String.init))
        add("pitch", options.pitch.map(String.init))
        add("volume", options.volume.map(String.init))
        add("id", options.clientID.map(JSONText.quote))
        add("ttl", options.ttlSeconds.map { String(Int($0)) })
        add("max_speech", options.maximumSpeechSeconds.map { String(Int($0)) })
        add("wait", submission.wait ? "true" : nil)
        return "{" + fields.joined(separator: ",") + "}"
    }
}

/// Reads the server's lines on its own thread while lines are still being sent: prints the replies (and
/// with `--wait` the outcomes) as they come, and keeps what each announcement got.
private final class SayReader: @unchecked Sendable {
    struct Message {
        /// Nil when the line was refused (or the reply was not `OK <n>`).
        var number: UInt64?
        var duplicate = false
        var refused = false
        var outcome: AnnouncementEvent?
    }

    struct Result {
        /// One for each reply to a line of text, in the order sent.
        var messages: [Message] = []
        /// The refusal that closed the connection before anything was taken (`ERR auth-failed …`).
        var connectionRefusal: String?
        /// `ERR idle …`: no line for the server's `--idle-timeout` (standard input was slow); it closed.
        var closedIdle: String?
    }

    // Written by the reader thread before `done` is signalled; read after `wait()`.
    private var result = Result()
    private let done = DispatchSemaphore(value: 0)

    init(_ client: CommandClient, json: Bool, wait: Bool) {
        startThread(name: "bobao.replies") { [self] in
            var firstLine = client.authenticates
            func output(_ line: String) { StandardStreams.writeOutput(line + "\n") }
            while let line = client.readLine() {
                if line.hasPrefix("{") {
                    if json { output(line) }  // events pass through as the server wrote them
                    guard let (event, number, _) = EventLine.parse(line) else { continue }
                    if event.isOutcome,
                       let index = result.messages.firstIndex(where: { $0.number == number && $0.outcome == nil }) {
                        result.messages[index].outcome = event
                    }
                    if !json && wait && event != .start { output(EventLine.describe(event, number: number)) }
                    continue
                }
                let reply = ServerReply(line)
                if firstLine {
                    // The answer to AUTH is not the answer to a line of text.
                    firstLine = false
                    switch client.authAnswer(line) {
                    case .accepted:
                        if !json { output(line) }
                        continue
                    case .notNeeded:
                        if !json { output(line) }
                        client.warnTokenNotNeeded()
                        continue
                    case nil: break
                    }
                }
                output(json ? reply.json : line)
                if case .refused(let code, _) = reply, CommandClient.connectionRefusals.contains(code) {
                    result.connectionRefusal = line
                    continue
                }
                if case .refused("idle", _) = reply {
                    result.closedIdle = line  // not the answer to a line
                    continue
                }
                switch reply {
                case .accepted(let number, let duplicate): result.messages.append(Message(number: number, duplicate: duplicate))
                case .ok: result.messages.append(Message())
                case .refused, .unexpected: result.messages.append(Message(refused: true))
                }
            }
            done.signal()
        }
    }

    func wait() -> Result {
        done.wait()
        return result
    }
}
