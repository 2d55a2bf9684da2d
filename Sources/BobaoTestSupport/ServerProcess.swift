import Foundation

/// A `bobao serve` process started for a test: on port 0, against a given sound server, with its log
/// collected. `init` returns once it has printed the address it bound. A server the test did not stop is
/// killed when the `ServerProcess` is released.
public final class ServerProcess: @unchecked Sendable {
    // `process` is used by the creating thread only; the reader threads and the termination handler hold
    // only `output`, so they never keep the server alive.
    private let process: Subprocess
    private let output = ServerOutput()
    public let host = "127.0.0.1"
    public let port: UInt16
    /// The HTTP port, when the arguments asked for one (`--http 127.0.0.1:0`).
    public let httpPort: UInt16?

    /// - Parameter launcher: a program and its arguments that run the server (`prlimit --nofile=64 --`),
    ///   or none.
    public init(
        arguments: [String] = [], pulseServer: String?, environment: [String: String] = [:], launcher: [String] = []
    ) throws {
        var env = environment
        if let pulseServer { env["PULSE_SERVER"] = pulseServer }
        // Each server gets its own state folder, so no test inherits another's spool.
        if env["XDG_STATE_HOME"] == nil {
            env["XDG_STATE_HOME"] = FileManager.default.temporaryDirectory
                .appendingPathComponent("bobao-state-\(UUID().uuidString.prefix(8))").path
        }
        let command = launcher + [BobaoBinary.path, "serve", "--listen", "127.0.0.1:0"] + arguments
        process = try Subprocess(command[0], Array(command.dropFirst()), environment: env)
        let output = self.output, process = self.process
        Thread {
            process.wait()
            output.update { $0.exited = true }
        }.start()
        output.collect(process.standardOutput!) { $0.stdout += $1 }
        output.collect(process.standardError!) { $0.log += $1 }
        let lines = arguments.contains("--http") ? 2 : 1
        let listening = output.waitFor(timeout: 30) { $0.stdout.filter { $0 == "\n" }.count >= lines || $0.exited }
        let printed = output.read { $0.stdout.split(separator: "\n").map(String.init) }
        let firstLine = printed.first ?? ""
        guard listening, firstLine.hasPrefix("listening on "), let colon = firstLine.lastIndex(of: ":"),
              let port = UInt16(firstLine[firstLine.index(after: colon)...]) else {
            process.signal(SIGKILL)
            throw ProgramError.failed("bobao serve", ProgramResult(
                status: -1, stdout: Data(firstLine.utf8), stderr: output.read { $0.log }))
        }
        self.port = port
        httpPort = printed.dropFirst().first { $0.hasPrefix("http on ") }
            .flatMap { line in line.lastIndex(of: ":").flatMap { UInt16(line[line.index(after: $0)...]) } }
    }

    /// `127.0.0.1:PORT` of the HTTP server.
    public var httpAddress: String? { httpPort.map { "\(host):\($0)" } }

    /// Waits, waking on every log write, until `predicate` holds for the log or `timeout` passes.
    @discardableResult
    public func waitFor(timeout: Double, _ predicate: (String) -> Bool) -> Bool {
        output.waitFor(timeout: timeout) { predicate($0.log) }
    }

    /// Waits until the log contains `text`.
    @discardableResult
    public func waitForLog(_ text: String, timeout: Double = 30) -> Bool {
        waitFor(timeout: timeout) { $0.contains(text) }
    }

    /// Everything the server has logged so far.
    public var log: String { output.read { $0.log } }

    public var address: String { "\(host):\(port)" }

    public var pid: Int32 { process.pid }

    /// Sends `signal` without waiting.
    public func signal(_ number: Int32) {
        process.signal(number)
    }

    /// Waits for the exit, and for the last of its output to be read (so `log` holds its last line);
    /// returns the exit status (or -1 on timeout).
    public func wait(timeout: Double = 60) -> Int32 {
        guard let status = process.wait(timeout: timeout) else { return -1 }
        // A child of the server holding the pipes open must not hang the test: a few seconds at most.
        _ = output.waitFor(timeout: 5) { $0.closedPipes == 2 }
        return status
    }

    /// Sends `signal` and waits for the exit and the last of its output; returns the exit status (or -1 on
    /// timeout).
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: Double = 60) -> Int32 {
        process.signal(signal)
        return wait(timeout: timeout)
    }

    deinit {
        process.signal(SIGKILL)
    }
}

/// The server's output and exit, guarded by `condition`.
private final class ServerOutput: @unchecked Sendable {
    struct Text {
        var stdout = ""
        var log = ""
        var exited = false
        /// Pipes read to their end (the server's last words are in `stdout` and `log`).
        var closedPipes = 0
    }

    private let condition = NSCondition()
    private var text = Text()

    func update(_ change: (inout Text) -> Void) {
        condition.lock()
        change(&text)
        condition.broadcast()
        condition.unlock()
    }

    func read<T>(_ body: (Text) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(text)
    }

    func waitFor(timeout: Double, _ predicate: (Text) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(text) {
            if !condition.wait(until: deadline) { return predicate(text) }
        }
        return true
    }

    func collect(_ handle: FileHandle, _ append: @escaping @Sendable (inout Text, String) -> Void) {
        Thread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { return update { $0.closedPipes += 1 } }
                update { append(&$0, String(decoding: data, as: UTF8.self)) }
            }
        }.start()
    }
}
