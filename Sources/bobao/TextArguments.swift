import BobaoPlatform

/// The TEXT of `render`, `phonemes`: the words given, joined with spaces as `say` joins them; `-` or none
/// reads standard input. Empty text is a usage error; text beyond `maximumBytes` an error (an hour of speech
/// would be held in memory).
enum TextArguments {
    static let maximumBytes = 16_384

    static func text(_ words: [String], what command: String, verb: String? = nil) throws -> String {
        let text = try read(words, what: verb ?? command)
        guard text.utf8.count <= maximumBytes else {
            throw CommandError(description: "TEXT is \(text.utf8.count) bytes; \(command) takes at most \(maximumBytes) "
                + "(about 20 minutes of speech): split it")
        }
        return text
    }

    private static func read(_ words: [String], what command: String) throws -> String {
        guard words.isEmpty || words == ["-"] else {
            let text = words.joined(separator: " ")
            guard !text.allSatisfy(\.isWhitespace) else { throw CommandError.usage("empty TEXT: nothing to \(command)") }
            return text
        }
        if words.isEmpty && StandardStreams.inputIsTerminal {
            throw CommandError.usage("give TEXT, or pipe it in (\(command) - reads standard input)")
        }
        let text = String(decoding: StandardStreams.readInput(limit: maximumBytes + 1), as: UTF8.self)
        guard !text.allSatisfy(\.isWhitespace) else {
            throw CommandError(description: "standard input held no text: nothing to \(command)")
        }
        return text
    }
}
