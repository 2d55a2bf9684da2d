import BobaoCore
import BobaoPlatform

/// `bobao normalize [TEXT…|-] [--explain] [--stats]`: prints each line as Bobao will say it.
enum NormalizeCommand {
    static let usage = """
        usage: bobao normalize [--explain] [--stats] [TEXT…]   (TEXT -, or none: standard input, line by line)
        Prints each line as Bobao will say it: numbers, money, dates, times, phone numbers and units in words,
        as the server does before speaking (see bobao phonemes for how eSpeak then reads it).
          --explain             after each line, the rules that decided each span of it
          --stats               on standard error: lines and bytes read, and the time a line took
        Exit status: 0 when done, 2 for bad usage.
        """

    static func run(_ arguments: [String]) throws {
        let args = try Arguments(arguments, valued: [], switches: ["explain", "stats"])
        let normalizer = TextNormalizer.standard
        var lines = 0, bytes = 0
        var seconds = 0.0
        func handle(_ line: String) {
            let started = WallClock.monotonicSeconds()
            let spoken = normalizer.normalize(line)
            seconds += WallClock.monotonicSeconds() - started
            lines += 1
            bytes += line.utf8.count
            print(spoken)
            if args.flag("explain") {
                for decision in normalizer.explain(line) { print("  \(decision)") }
            }
        }
        if args.positional.isEmpty || args.positional == ["-"] {
            while let line = readLine(strippingNewline: true) { handle(line) }
        } else {
            let text = args.positional.joined(separator: " ")
            guard !text.allSatisfy(\.isWhitespace) else { throw CommandError.usage("empty TEXT: nothing to normalize") }
            handle(text)
        }
        if args.flag("stats") {
            let perLine = lines > 0 ? seconds / Double(lines) * 1e6 : 0
            StandardStreams.writeError(
                "normalized \(lines) lines, \(bytes) bytes in \(Int(seconds * 1e6)) µs: \(Int(perLine)) µs a line\n")
        }
    }
}
