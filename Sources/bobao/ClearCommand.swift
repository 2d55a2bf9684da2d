/// `bobao clear`: cancels every announcement waiting (not the one speaking).
enum ClearCommand {
    static let usage = """
        usage: bobao clear [--to HOST:PORT] [--token SECRET]
        \(CommandClient.optionsUsage)
        Prints the reply (OK cleared 3).
        Exit status: 0 on OK, 1 on ERR or no reply, 2 for bad usage.
        """

    static func run(_ arguments: [String]) throws {
        try CommandClient.runBare(arguments, command: "clear")
    }
}
