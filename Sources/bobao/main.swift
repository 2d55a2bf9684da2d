import BobaoCore
import BobaoPlatform
import BobaoSpeech
import Glibc

let usage = """
    usage: bobao COMMAND [OPTIONS]
      serve      run the announcement server (TCP lines in, speech out)
      say        send announcements to a running server (--wait: and report how each ended)
      status     show a running server's state: sound, queue, what is speaking, counters
      cancel     take an announcement out of the queue, or stop it speaking (ID, or --all)
      skip       stop the announcement speaking now
      clear      cancel every waiting announcement
      volume     set Bobao's own stream volume at once, kept across restarts (or print it)
      render     synthesize TEXT to a WAV file
      normalize  print TEXT as it will be said (numbers, money, dates, times … in words)
      voices     list Bobao's voices and eSpeak NG's built-in ones
      phonemes   print the phonemes eSpeak would speak for TEXT
    Run `bobao COMMAND --help` for a command's options.
    """

var arguments = Array(CommandLine.arguments.dropFirst())
let command = arguments.isEmpty ? "help" : arguments.removeFirst()
do {
    switch command {
    case "serve": try ServeCommand.run(arguments)
    case "say": try SayCommand.run(arguments)
    case "status": try StatusCommand.run(arguments)
    case "cancel": try CancelCommand.run(arguments)
    case "skip": try SkipCommand.run(arguments)
    case "clear": try ClearCommand.run(arguments)
    case "volume": try VolumeCommand.run(arguments)
    case "render": try RenderCommand.run(arguments)
    case "voices": try VoicesCommand.run(arguments)
    case "phonemes": try PhonemesCommand.run(arguments)
    case "normalize": try NormalizeCommand.run(arguments)
    case "help", "--help", "-h": print(usage)
    case "--version", "version": print("bobao \(BobaoVersion.current)")
    default: throw CommandError.usage("unknown command '\(command)'\n\(usage)")
    }
    exit(0)
} catch let error as CommandError {
    StandardStreams.writeError("bobao \(command): \(error.description)\n")
    exit(error.isUsage ? 2 : 1)
} catch {
    StandardStreams.writeError("bobao \(command): \(error)\n")
    exit(1)
}
