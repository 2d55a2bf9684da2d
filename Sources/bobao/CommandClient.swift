import BobaoCore
import BobaoPlatform
import BobaoServer
import Glibc

/// The client side of `say`, `status`, `cancel`, `skip`, `clear` and `volume`: `--to` and `--token` (or
/// `BOBAO_TOKEN`), the connection, `AUTH` sent first, lines out and lines in.
final class CommandClient: @unchecked Sendable {
    // One thread sends, one reads (LineClient's own rule); the rest is set once in init.
    static let valuedOptions: Set<String> = ["to", "token"]
    static let optionsUsage = """
          --to HOST:PORT        the server (default 127.0.0.1:\(ListenAddress.defaultPort))
          --token SECRET        sent first as AUTH SECRET (or set BOBAO_TOKEN)
        """
    /// Refusals after which the server closes the connection without taking anything this client sent.
    static let connectionRefusals: Set<String> = ["auth-required", "auth-failed", "auth-timeout", "busy", "forbidden"]

    let command: String
    let target: ListenAddress
    private let connection: LineClient
    /// Whether `AUTH` went first: then the first line read answers it.
    let authenticates: Bool

    /// Connects and sends `AUTH` if a token is set. A bad `--to` is a usage error; an unreachable server a failure.
    init(_ args: Arguments, command: String) throws {
        signal(SIGPIPE, SIG_IGN)
        self.command = command
        if let token = args.string("token"), token.isEmpty || token.contains(where: \.isWhitespace) {
            throw CommandError.usage("--token must be the server's token: not empty, without spaces")
        }
        do { target = try ListenAddress(parsing: args.string("to") ?? "127.0.0.1:\(ListenAddress.defaultPort)") } catch {
            throw CommandError.usage("--to: \(error.description)")
        }
        do { connection = try LineClient(connectingTo: target) } catch {
            throw CommandError(description: "cannot reach a Bobao server at \(target): \(error)")
        }
        let token = args.string("token") ?? FileSystem.environment("BOBAO_TOKEN").flatMap { $0.isEmpty ? nil : $0 }
        authenticates = token != nil
        if let token { try send("AUTH \(token)") }
    }

    /// Sends `line` and a newline.
    func send(_ line: String) throws {
        do { try connection.send(line + "\n") } catch {
            throw CommandError(description: "lost the connection to \(target) while sending: \(error)")
        }
    }

    /// Nothing more to send: the server answers what it has, sends the outcomes it was asked to wait for,
    /// and closes.
    func finishSending() { connection.finishSending() }

    /// The next line from the server without its newline; nil at the end of the stream.
    func readLine() -> String? { connection.readLine() }

    /// What the first line read says about `AUTH`, when one was sent.
    enum AuthAnswer {
        case accepted
        /// `ERR auth-unexpected`: the server takes no token; the connection goes on.
        case notNeeded
    }

    func authAnswer(_ line: String) -> AuthAnswer? {
        switch ServerReply(line) {
        case .ok("authenticated"): .accepted
        case .refused("auth-unexpected", _): .notNeeded
        default: nil
        }
    }

    /// The error for a connection refusal (`ERR auth-failed …`, `ERR busy …`).
    func turnedAway(_ line: String, nothingSpoken: Bool = false) -> CommandError {
        CommandError(description: "the server at \(target) did not let this client in (\(line))"
            + (nothingSpoken ? "; nothing was spoken" : ""))
    }

    func warnTokenNotNeeded() {
        StandardStreams.writeError("bobao \(command): note: the server at \(target) takes no token; --token (or BOBAO_TOKEN) was not needed\n")
    }

    /// Sends one JSON command and returns the server's reply to it, past the answer to `AUTH`. Throws when
    /// the server turns this client away or closes without replying.
    static func exchange(_ args: Arguments, command: String, line: String) throws -> String {
        let client = try CommandClient(args, command: command)
        var sendError: Error?
        do { try client.send(line) } catch { sendError = error }  // what the server said first is the better reason
        client.finishSending()
        var firstLine = client.authenticates
        while let reply = client.readLine() {
            if firstLine {
                firstLine = false
                switch client.authAnswer(reply) {
                case .accepted: continue
                case .notNeeded: client.warnTokenNotNeeded(); continue
                case nil: break
                }
            }
            if case .refused(let code, _) = ServerReply(reply), connectionRefusals.contains(code) {
                throw client.turnedAway(reply)
            }
            return reply
        }
        throw sendError ?? CommandError(description: "the server at \(client.target) closed the connection without replying")
    }

    /// `cancel`, `skip`, `clear`, `volume`: sends `line`, prints the reply, and fails (exit 1) unless it is `OK`.
    /// A command with no argument but `--to` and `--token` (`bobao skip`, `bobao clear`): sends
    /// `{"cmd":"COMMAND"}` and prints the reply.
    static func runBare(_ arguments: [String], command: String) throws {
        let args = try Arguments(arguments, valued: valuedOptions)
        guard args.positional.isEmpty else { throw CommandError.usage("unexpected argument '\(args.positional[0])'") }
        try run(args, command: command, line: "{\"cmd\":\(JSONText.quote(command))}")
    }

    static func run(_ args: Arguments, command: String, line: String) throws {
        let reply = try exchange(args, command: command, line: line)
        StandardStreams.writeOutput(reply + "\n")
        guard ServerReply(reply).isOK else { throw CommandError(description: "the server refused the command") }
    }
}
