/// `bobao skip`: stops the announcement speaking now; the next one follows.
enum SkipCommand {
    static let usage = """
        usage: bobao skip [--to HOST:PORT] [--token SECRET]
        \(CommandClient.optionsUsage)
        Prints the reply (OK skipped #12, or OK nothing is speaking).
        Exit status: 0 on OK, 1 on ERR or no reply, 2 for bad usage.
        """

    static func run(_ arguments: [String]) throws {
        try CommandClient.runBare(arguments, command: "skip")
    }
}
