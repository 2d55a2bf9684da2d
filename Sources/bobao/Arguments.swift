import BobaoCore

/// A command-line error: printed as one line, exit status 2 (usage) or 1 (failure).
struct CommandError: Error, CustomStringConvertible {
    let description: String
    var isUsage = false

    static func usage(_ message: String) -> CommandError { CommandError(description: message, isUsage: true) }
}

/// Reads `--flag VALUE`, `--flag=VALUE`, bare `--switch` and positional arguments, in any order.
struct Arguments {
    private var options: [String: String] = [:]
    /// Every value a flag given more than once had, in order (`options` holds the last).
    private var repeated: [String: [String]] = [:]
    private var switches: Set<String> = []
    private(set) var positional: [String] = []
    private var known: Set<String>
    /// The environment variable each setting taken from the environment came from.
    private var variables: [String: String] = [:]
    /// Switches an environment variable turned off explicitly (`BOBAO_NO_SPOOL=false`).
    private var switchedOff: Set<String> = []

    /// - Parameters:
    ///   - valued: flags that take a value, without the leading dashes (`"voice"`, `"o"`).
    ///   - switches: flags without a value.
    init(_ arguments: [String], valued: Set<String>, switches knownSwitches: Set<String> = []) throws {
        known = valued.union(knownSwitches)
        var index = 0
        var onlyPositional = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositional || argument == "-" || !argument.hasPrefix("-") {
                positional.append(argument)
                continue
            }
            if argument == "--" { onlyPositional = true; continue }
            var name = String(argument.drop(while: { $0 == "-" }))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if knownSwitches.contains(name), value == nil {
                switches.insert(name)
            } else if valued.contains(name) {
                if value == nil {
                    guard index < arguments.count else { throw CommandError.usage("\(argument) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                options[name] = value
                repeated[name, default: []].append(value!)
            } else {
                throw CommandError.usage("unknown option \(argument)")
            }
        }
    }

    func string(_ name: String) -> String? { options[name] }
    func flag(_ name: String) -> Bool { switches.contains(name) }
    /// Every value of a flag that may be repeated (`--group a --group b`), or its variable's one value.
    func strings(_ name: String) -> [String] {
        guard let last = options[name] else { return [] }
        return repeated[name] ?? [last]
    }

    /// How an error names a setting: `--queue`, or `BOBAO_QUEUE` when the value came from the environment.
    func label(_ name: String) -> String { variables[name] ?? "--\(name)" }

    /// Where a setting came from: `--queue`, `BOBAO_QUEUE`, or nil when it was not given (its default).
    func source(_ name: String) -> String? {
        if let variable = variables[name] { return variable }
        return options[name] != nil || switches.contains(name) ? "--\(name)" : nil
    }

    /// `BOBAO_QUEUE` for `queue`, `BOBAO_NO_SPOOL` for `no-spool`.
    static func variable(for name: String) -> String {
        "BOBAO_" + String(name.uppercased().map { $0 == "-" ? "_" : $0 })
    }

    /// Takes each of `valued` and `switches` not given as a flag from its `BOBAO_…` variable, if set and not
    /// empty (flags win). A switch's variable is true/false, yes/no, on/off or 1/0. Of two settings that
    /// `contradict` each other, one given as a flag drops the other's variable.
    mutating func addEnvironment(
        _ environment: [String: String], valued: Set<String>, switches known: Set<String>,
        contradicting: [(String, String)] = []
    ) throws {
        let given = Set(options.keys).union(switches)
        for name in valued.union(known).sorted() where !given.contains(name) {
            let variable = Self.variable(for: name)
            guard let value = environment[variable], !value.isEmpty else { continue }
            if known.contains(name) {
                switch value.lowercased() {
                case "1", "true", "yes", "on": switches.insert(name)
                case "0", "false", "no", "off": switchedOff.insert(name)
                default:
                    throw CommandError.usage("\(variable) must be true or false (yes/no, on/off, 1/0), not '\(value)'")
                }
            } else {
                options[name] = value
            }
            variables[name] = variable
        }
        for (one, other) in contradicting {
            for (flagged, dropped) in [(one, other), (other, one)] where given.contains(flagged) && variables[dropped] != nil {
                options[dropped] = nil
                switches.remove(dropped)
                variables[dropped] = nil
            }
        }
    }

    func int(_ name: String) throws -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text) else { throw CommandError.usage("\(label(name)) needs a whole number, not '\(text)'") }
        return value
    }

    /// A whole number within `range`; the error names the option, the range and `unit`.
    func int(_ name: String, in range: ClosedRange<Int>, _ unit: String) throws -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw CommandError.usage("\(label(name)) must be \(range.lowerBound) to \(range.upperBound)\(unit.isEmpty ? "" : " " + unit), not '\(text)'")
        }
        return value
    }

    /// One of `choices`; the error names the option and lists them.
    func choice(_ name: String, of choices: [String]) throws -> String? {
        guard let text = options[name] else { return nil }
        guard choices.contains(text) else {
            let listed = choices.dropLast().joined(separator: ", ") + " or " + choices.last!
            throw CommandError.usage("\(label(name)) must be \(listed), not '\(text)'")
        }
        return text
    }

    /// `--voice`, `--rate`, `--pitch`, `--volume` over `base`, range-checked.
    func speechParameters(base: SpeechParameters = SpeechParameters()) throws -> SpeechParameters {
        var parameters = base
        if let voice = string("voice") {
            guard !voice.isEmpty else { throw CommandError.usage("\(label("voice")) needs a voice name") }
            parameters.voice = voice
        }
        if let rate = try int("rate", in: SpeechParameters.rateRange, "words a minute") { parameters.rate = rate }
        if let pitch = try int("pitch", in: SpeechParameters.pitchRange, "") { parameters.pitch = pitch }
        if let volume = try int("volume", in: SpeechParameters.volumeRange, "percent") { parameters.volume = volume }
        return parameters
    }

    static let speechOptions: Set<String> = ["voice", "rate", "pitch", "volume"]
}
