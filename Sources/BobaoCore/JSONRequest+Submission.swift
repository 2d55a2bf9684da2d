/// The fields of a JSON announcement, checked in the order the line gives them; `text` is the only one it
/// must give.
extension JSONRequest {
    static func readSubmission(_ fields: [(Field, JSONValue)], rules: MessageRules) throws(LineProtocol.Refusal)
        -> Submission
    {
        var text: String?
        var options = MessageOptions()
        var wait = false
        for (field, value) in fields {
            switch field {
            case .text:
                text = try readText(value)
            case .priority:
                guard case .string(let name) = value, let priority = Priority(rawValue: name.lowercased()) else {
                    throw .badField("priority", "must be \"urgent\", \"normal\" or \"low\"")
                }
                options.priority = priority
            case .repeat:
                options.repeatCount = try whole(value, in: MessageOptions.repeatRange, "repeat")
            case .chime:
                switch value {
                case .bool(let on): options.chime = on ? .on : .off
                case .string(let name): options.chime = .named(try checkName(name, "chime", in: rules.chimes))
                default: throw .badField("chime", "must be true, false or a chime's name")
                }
            case .voice:
                guard case .string(let name) = value else { throw .badField("voice", "must be a voice's name") }
                options.voice = try checkName(name, "voice", in: rules.voices)
            case .rate:
                options.rate = try whole(value, in: SpeechParameters.rateRange, "rate")
            case .pitch:
                options.pitch = try whole(value, in: SpeechParameters.pitchRange, "pitch")
            case .volume:
                options.volume = try whole(value, in: MessageOptions.messageVolumeRange, "volume")
            case .id:
                options.clientID = try readID(value)
            case .ttl:
                options.ttlSeconds = try seconds(value, in: MessageRules.ttlRange, "ttl")
            case .maximumSpeech:
                options.maximumSpeechSeconds = try seconds(value, in: MessageRules.speechRange, "max_speech")
            case .wait:
                guard case .bool(let flag) = value else { throw .badField("wait", "must be true or false") }
                wait = flag
            case .all:
                throw .badField("all", "goes only with \"cmd\": \"cancel\"")
            case .value:
                throw .badField("value", "goes only with \"cmd\": \"volume\"")
            case .cmd:
                break  // read as a command before this
            }
        }
        guard let text else { throw .badField("text", "missing") }
        return Submission(text: text, options: options, wait: wait)
    }

    /// The text to speak: line breaks and tabs (which JSON can escape) become spaces; other controls are
    /// refused, as in a plain line.
    static func readText(_ value: JSONValue) throws(LineProtocol.Refusal) -> String {
        guard case .string(let raw) = value else { throw .badField("text", "must be a string") }
        var text = String.UnicodeScalarView()
        for scalar in raw.unicodeScalars {
            if scalar == "\r" || scalar == "\n" || scalar == "\t" {
                text.append(" ")
            } else if isControl(scalar) {
                throw .badField("text", "holds control characters")
            } else {
                text.append(scalar)
            }
        }
        let trimmed = String(text).trimmingWhitespace()
        guard !trimmed.isEmpty else { throw .badField("text", "empty") }
        return trimmed
    }

    /// A whole number within `range` (`2.0` is whole, `2.5` is not).
    static func whole(_ value: JSONValue, in range: ClosedRange<Int>, _ name: String) throws(LineProtocol.Refusal)
        -> Int
    {
        guard case .number(let number) = value, number.rounded() == number,
              Double(range.lowerBound) <= number, number <= Double(range.upperBound) else {
            throw .badField(name, "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return Int(number)
    }

    /// Seconds within `range` (whole milliseconds at least, as the spool keeps them).
    private static func seconds(_ value: JSONValue, in range: ClosedRange<Double>, _ name: String) throws(LineProtocol.Refusal)
        -> Double
    {
        guard case .number(let number) = value, number.isFinite, range.contains(number) else {
            throw .badField(name, "must be a number of seconds from \(format(range.lowerBound)) to \(format(range.upperBound))")
        }
        return number
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }

    /// A voice's or chime's name: one of `known` when the server gave the set, else a plausible name.
    private static func checkName(_ name: String, _ field: String, in known: Set<String>?) throws(LineProtocol.Refusal)
        -> String
    {
        if let known {
            // A voice may carry an eSpeak NG variant: `en+f3` is `en` with the `f3` variant.
            let base = field == "voice" ? String(name.prefix { $0 != "+" }) : name
            guard known.contains(name) || (known.contains(base) && MessageRules.isPlausibleName(name)) else {
                let names = known.sorted()
                var have = names.prefix(12).map { shown($0) }.joined(separator: ", ")
                if names.count > 12 { have += ", and \(names.count - 12) more" }
                throw .badField(field, "no \(field) named \(shown(name, quoted: true)) (have: \(names.isEmpty ? "none" : have))")
            }
        } else if !MessageRules.isPlausibleName(name) {
            let rule = "ASCII letters, digits and -_+., not starting with a dot, at most \(MessageRules.maximumNameBytes)"
            throw .badField(field, "\(shown(name, quoted: true)) is not a \(field) name (\(rule))")
        }
        return name
    }
}
