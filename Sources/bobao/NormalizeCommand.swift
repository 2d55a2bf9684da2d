import BobaoCore
import BobaoPlatform

/// `bobao normalize [TEXT…|-] [--explain] [--stats]`: prints each line as Bobao will say it.
enum NormalizeCommand {
    static let usage = "usage: bobao normalize [TEXT…|-] [--explain] [--stats]   (no TEXT: stdin, line by line)"

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
            handle(args.positional.joined(separator: " "))
        }
        if args.flag("stats") {
            let perLine = lines > 0 ? seconds / Double(lines) * 1e6 : 0
            StandardStreams.writeError(
                "normalized \(lines) lines, \(bytes) bytes in \(Int(seconds * 1e6)) µs: \(Int(perLine)) µs a line\n")
        }
    }
}
