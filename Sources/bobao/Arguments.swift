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
    private var switches: Set<String> = []
    private(set) var positional: [String] = []
    private var known: Set<String>

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
            } else {
                throw CommandError.usage("unknown option \(argument)")
            }
        }
    }

    func string(_ name: String) -> String? { options[name] }
    func flag(_ name: String) -> Bool { switches.contains(name) }

    func int(_ name: String) throws -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text) else { throw CommandError.usage("--\(name) needs a whole number, not '\(text)'") }
        return value
    }

    /// A whole number within `range`; the error names the option, the range and `unit`.
    func int(_ name: String, in range: ClosedRange<Int>, _ unit: String) throws -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw CommandError.usage("--\(name) must be \(range.lowerBound) to \(range.upperBound)\(unit.isEmpty ? "" : " " + unit), not '\(text)'")
        }
        return value
    }

    /// One of `choices`; the error names the option and lists them.
    func choice(_ name: String, of choices: [String]) throws -> String? {
        guard let text = options[name] else { return nil }
        guard choices.contains(text) else {
            let listed = choices.dropLast().joined(separator: ", ") + " or " + choices.last!
            throw CommandError.usage("--\(name) must be \(listed), not '\(text)'")
        }
        return text
    }

    /// `--voice`, `--rate`, `--pitch`, `--volume` over `base`, range-checked.
    func speechParameters(base: SpeechParameters = SpeechParameters()) throws -> SpeechParameters {
        var parameters = base
        if let voice = string("voice") { parameters.voice = voice }
        if let rate = try int("rate") { parameters.rate = rate }
        if let pitch = try int("pitch") { parameters.pitch = pitch }
        if let volume = try int("volume") { parameters.volume = volume }
        do { try parameters.validate() } catch { throw CommandError.usage(error.description) }
        return parameters
    }

    static let speechOptions: Set<String> = ["voice", "rate", "pitch", "volume"]
}
