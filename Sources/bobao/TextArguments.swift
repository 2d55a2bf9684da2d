import BobaoPlatform

/// The TEXT of `render`, `phonemes`: the words given, joined with spaces as `say` joins them; `-` or none
/// reads standard input. Empty text is a usage error.
enum TextArguments {
    static func text(_ words: [String], what command: String) throws -> String {
        guard words.isEmpty || words == ["-"] else {
            let text = words.joined(separator: " ")
            guard !text.allSatisfy(\.isWhitespace) else { throw CommandError.usage("empty TEXT: nothing to \(command)") }
            return text
        }
        if words.isEmpty && StandardStreams.inputIsTerminal {
            throw CommandError.usage("give TEXT, or pipe it in (\(command) - reads standard input)")
        }
        let text = String(decoding: StandardStreams.readInput(), as: UTF8.self)
        guard !text.allSatisfy(\.isWhitespace) else {
            throw CommandError(description: "standard input held no text: nothing to \(command)")
        }
        return text
    }
}
