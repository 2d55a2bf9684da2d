import BobaoCore
import BobaoPlatform
import BobaoServer
import Dispatch
import Glibc

/// `bobao say TEXT…`: sends an announcement (or stdin, line by line) to a running server and prints
/// its replies. Exits 1 if any line was refused or the server could not be reached.
enum SayCommand {
    static let usage = """
        usage: bobao say [--to HOST:PORT] [--token SECRET] [TEXT…]   (no TEXT: one announcement per line of stdin)
          --token  sent first as AUTH SECRET (or set BOBAO_TOKEN)
        """

    static func run(_ arguments: [String]) throws {
        signal(SIGPIPE, SIG_IGN)
        let args = try Arguments(arguments, valued: ["to", "token"], switches: ["help"])
        if args.flag("help") { print(usage); return }
        let target: ListenAddress
        do { target = try ListenAddress(parsing: args.string("to") ?? "127.0.0.1:\(ListenAddress.defaultPort)") } catch {
            throw CommandError.usage("--to: \(error.description)")
        }
        let connection: LineClient
        do { connection = try LineClient(connectingTo: target) } catch {
            throw CommandError(description: "cannot reach a Bobao server at \(target): \(error)")
        }
        // Replies are read on their own thread while lines are still being sent.
        let replies = ReplyReader(connection)
        var sent = 0
        func send(_ line: String) throws {
            let text = line.trimmingWhitespace()
            guard !text.isEmpty else { return }  // the server ignores blank lines and sends no reply
            do { try connection.send(text + "\n") } catch {
                throw CommandError(description: "lost the connection to \(target) while sending: \(error)")
            }
            sent += 1
        }
        if let token = args.string("token") ?? FileSystem.environment("BOBAO_TOKEN") {
            do { try connection.send("AUTH \(token)\n") } catch {
                throw CommandError(description: "lost the connection to \(target) while sending: \(error)")
            }
        }
        if args.positional.isEmpty || args.positional == ["-"] {
            while let line = readLine(strippingNewline: true) { try send(line) }
        } else {
            try send(args.positional.joined(separator: " "))
        }
        connection.finishSending()
        let (answered, refused, authRefusal) = replies.wait()
        if let authRefusal {
            throw CommandError(description: "the server at \(target) did not let this client in (\(authRefusal)); nothing was spoken")
        }
        if refused > 0 {
            throw CommandError(description: "\(refused) of \(sent) line(s) refused")
        }
        if answered < sent {
            throw CommandError(description: "the server at \(target) closed the connection after \(answered) of \(sent) replies")
        }
    }
}

/// Prints each reply line as it arrives and counts the refusals.
private final class ReplyReader: @unchecked Sendable {
    // Written by the reader thread before `done` is signalled; read after `wait()`.
    private var answered = 0
    private var refused = 0
    /// The answer to `AUTH`, when it was a refusal.
    private var authRefusal: String?
    private let done = DispatchSemaphore(value: 0)

    init(_ connection: LineClient) {
        startThread(name: "bobao.replies") { [self] in
            while let line = connection.readLine() {
                StandardStreams.writeOutput(line + "\n")
                // The answer to AUTH is not the answer to a line of text.
                if line == "OK authenticated" { continue }
                if line.hasPrefix("ERR auth-") {
                    authRefusal = line
                    continue
                }
                answered += 1
                if line.hasPrefix("ERR") { refused += 1 }
            }
            done.signal()
        }
    }

    func wait() -> (answered: Int, refused: Int, authRefusal: String?) {
        done.wait()
        return (answered, refused, authRefusal)
    }
}
