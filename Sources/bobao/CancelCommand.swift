import BobaoCore

/// `bobao cancel ID | --all`: takes a waiting announcement out of the queue, or stops it while it speaks.
enum CancelCommand {
    static let usage = """
        usage: bobao cancel [--to HOST:PORT] [--token SECRET] ID | --all
        \(CommandClient.optionsUsage)
          ID                    the announcement's client key (say --id), or the number of one
                                sent without a key (12)
          --all                 everything waiting and the one speaking
        Prints the reply (OK cancelled #12, OK cancelled 3, ERR not-found …).
        Exit status: 0 on OK, 1 on ERR or no reply, 2 for bad usage.
        """

    static func run(_ arguments: [String]) throws {
        let args = try Arguments(arguments, valued: CommandClient.valuedOptions, switches: ["all"])
        let line: String
        switch (args.positional.count, args.flag("all")) {
        case (0, true):
            line = "{\"cmd\":\"cancel\",\"all\":true}"
        case (1, false) where !args.positional[0].isEmpty:
            line = "{\"cmd\":\"cancel\",\"id\":\(JSONText.quote(args.positional[0]))}"
        case (_, true):
            throw CommandError.usage("give an ID or --all, not both")
        default:
            throw CommandError.usage("give one ID (a client key or a number) or --all")
        }
        try CommandClient.run(args, command: "cancel", line: line)
    }
}
