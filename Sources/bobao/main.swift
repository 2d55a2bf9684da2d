import BobaoCore
import BobaoPlatform
import Glibc

var arguments = Array(CommandLine.arguments.dropFirst())
guard !arguments.isEmpty else {
    // No command: the list of commands, as a usage error (a script that forgot its command fails).
    StandardStreams.writeError(CommandTable.usage + "\n")
    exit(2)
}
let name = arguments.removeFirst()

/// Usage errors are one line and a pointer to the help; failures one line.
func fail(_ error: any Error, command: String?) -> Never {
    let prefix = command.map { "bobao \($0): " } ?? "bobao: "
    if let error = error as? CommandError {
        let hint = command.map { "Run 'bobao \($0) --help' for its options." } ?? "Run 'bobao help' for the commands."
        StandardStreams.writeError(prefix + error.description + (error.isUsage ? "\n" + hint : "") + "\n")
        exit(error.isUsage ? 2 : 1)
    }
    StandardStreams.writeError(prefix + "\(error)\n")
    exit(1)
}

switch name {
case "help", "--help", "-h":
    guard let topic = arguments.first else {
        print(CommandTable.usage)
        exit(0)
    }
    if arguments == ["help"] {
        print(CommandTable.usage)
        exit(0)
    }
    guard arguments.count == 1, let entry = CommandTable.entry(named: topic) else {
        fail(CommandError.usage("no command named '\(arguments.joined(separator: " "))'"), command: nil)
    }
    print(entry.usage)
case "--version", "version", "-V":
    print("bobao \(BobaoVersion.current)")
default:
    guard let entry = CommandTable.entry(named: name) else {
        let known = CommandTable.entries.map(\.name).joined(separator: ", ")
        let what = name.hasPrefix("-") ? "unknown option \(name)" : "unknown command '\(name)'"
        fail(CommandError.usage("\(what) (commands: \(known))"), command: nil)
    }
    if CommandTable.asksForHelp(arguments) {
        print(entry.usage)
        exit(0)
    }
    do { try entry.run(arguments) } catch { fail(error, command: name) }
}
exit(0)
