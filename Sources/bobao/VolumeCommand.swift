import BobaoCore

/// `bobao volume [PERCENT]`: sets Bobao's own stream volume on a running server, or prints it.
enum VolumeCommand {
    static let usage = """
        usage: bobao volume [--to HOST:PORT] [--token SECRET] [PERCENT]
        \(CommandClient.optionsUsage)
          PERCENT               0 to 100: Bobao's own stream volume, in percent of the sound server's
                                normal volume. It changes at once, without a restart, and the server
                                keeps it in its spool for the next start (with serve --no-spool only
                                until it stops). Leave it out to print the volume.
        Prints the reply (OK volume set to 70, OK volume 70, or OK volume not set … when no client has
        set one and the sound server's own applies).
        Exit status: 0 on OK, 1 on ERR or no reply, 2 for bad usage.
        """

    static func run(_ arguments: [String]) throws {
        let args = try Arguments(arguments, valued: CommandClient.valuedOptions)
        let line: String
        switch args.positional.count {
        case 0:
            line = #"{"cmd":"volume"}"#
        case 1:
            try line = "{\"cmd\":\"volume\",\"value\":\(percent(args.positional[0]))}"
        default:
            throw CommandError.usage("give one PERCENT at most")
        }
        try CommandClient.run(args, command: "volume", line: line)
    }

    /// `70` or `70%`, within `ClientCommand.volumeRange`.
    static func percent(_ text: String) throws -> Int {
        let digits = text.hasSuffix("%") ? String(text.dropLast()) : text
        let range = ClientCommand.volumeRange
        guard let value = Int(digits), range.contains(value) else {
            throw CommandError.usage("PERCENT must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return value
    }
}
