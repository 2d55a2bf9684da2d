/// Bobao's commands: what `bobao help` lists, `bobao help COMMAND` and `COMMAND --help` print, and what runs.
struct CommandEntry: Sendable {
    let name: String
    let summary: String
    let usage: String
    let run: @Sendable ([String]) throws -> Void
}

enum CommandTable {
    static let entries: [CommandEntry] = [
        CommandEntry(name: "serve", summary: "run the announcement server (TCP lines in, speech out)",
                     usage: ServeCommand.usage, run: ServeCommand.run),
        CommandEntry(name: "say", summary: "send announcements to a running server (--wait: and report how each ended)",
                     usage: SayCommand.usage, run: SayCommand.run),
        CommandEntry(name: "status", summary: "show a running server's state: sound, queue, what is speaking, counters",
                     usage: StatusCommand.usage, run: StatusCommand.run),
        CommandEntry(name: "cancel", summary: "take an announcement out of the queue, or stop it speaking (ID, or --all)",
                     usage: CancelCommand.usage, run: CancelCommand.run),
        CommandEntry(name: "skip", summary: "stop the announcement speaking now", usage: SkipCommand.usage, run: SkipCommand.run),
        CommandEntry(name: "clear", summary: "cancel every waiting announcement", usage: ClearCommand.usage, run: ClearCommand.run),
        CommandEntry(name: "volume", summary: "set Bobao's own stream volume at once, kept across restarts (or print it)",
                     usage: VolumeCommand.usage, run: VolumeCommand.run),
        CommandEntry(name: "render", summary: "synthesize TEXT to a WAV file (or to standard output)",
                     usage: RenderCommand.usage, run: RenderCommand.run),
        CommandEntry(name: "normalize", summary: "print TEXT as it will be said (numbers, money, dates, times … in words)",
                     usage: NormalizeCommand.usage, run: NormalizeCommand.run),
        CommandEntry(name: "voices", summary: "list Bobao's voices and eSpeak NG's built-in ones",
                     usage: VoicesCommand.usage, run: VoicesCommand.run),
        CommandEntry(name: "phonemes", summary: "print the phonemes Bobao will speak for TEXT (after normalizing it)",
                     usage: PhonemesCommand.usage, run: PhonemesCommand.run),
    ]

    static func entry(named name: String) -> CommandEntry? { entries.first { $0.name == name } }

    static var usage: String {
        let width = entries.map(\.name.count).max()! + 2
        let lines = entries.map { "  " + $0.name + String(repeating: " ", count: width - $0.name.count) + $0.summary }
        return """
            usage: bobao COMMAND [OPTIONS]
            \(lines.joined(separator: "\n"))
              help COMMAND, COMMAND --help   a command's options;  --version   Bobao's version
            Exit status: 0 on success, 1 when the command failed, 2 for bad usage.
            """
    }

    /// Whether `arguments` ask for help: `-h` or `--help` before any `--`.
    static func asksForHelp(_ arguments: [String]) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "-h" || argument == "--help" { return true }
        }
        return false
    }
}
