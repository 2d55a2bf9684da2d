import Foundation

/// A `bobao serve` process started for a test: on port 0, against a given sound server, with its log
/// collected. `init` returns once it has printed the address it bound.
public final class ServerProcess: @unchecked Sendable {
    // `log` and `address` are guarded by `condition`; `process` is used by the creating thread only.
    private let process = Process()
    private let condition = NSCondition()
    private var logText = ""
    private var stdoutText = ""
    private var exited = false
    public private(set) var host = "127.0.0.1"
    public private(set) var port: UInt16 = 0

    public init(arguments: [String] = [], pulseServer: String?, environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: BobaoBinary.path)
        process.arguments = ["serve", "--listen", "127.0.0.1:0"] + arguments
        var env = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let pulseServer { env["PULSE_SERVER"] = pulseServer }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        process.terminationHandler = { [self] _ in
            condition.lock()
            exited = true
            condition.broadcast()
            condition.unlock()
        }
        try process.run()
        collect(out.fileHandleForReading) { $0.stdoutText += $1 }
        collect(err.fileHandleForReading) { $0.logText += $1 }
        let listening = waitFor(timeout: 30) { $0.stdoutText.contains("\n") }
        guard listening, let line = stdoutText.split(separator: "\n").first, line.hasPrefix("listening on "),
              let colon = line.lastIndex(of: ":"), let port = UInt16(line[line.index(after: colon)...]) else {
            process.terminate()
            throw ProgramError.failed("bobao serve", ProgramResult(status: -1, stdout: Data(stdoutText.utf8), stderr: log))
        }
        self.port = port
    }

    private func collect(_ handle: FileHandle, _ append: @escaping @Sendable (ServerProcess, String) -> Void) {
        Thread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { return }
                condition.lock()
                append(self, String(decoding: data, as: UTF8.self))
                condition.broadcast()
                condition.unlock()
            }
        }.start()
    }

    /// Waits, waking on every log write, until `predicate` holds or `timeout` passes.
    @discardableResult
    public func waitFor(timeout: Double, _ predicate: (ServerProcess) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(self) {
            if !condition.wait(until: deadline) { return predicate(self) }
        }
        return true
    }

    /// Waits until the log has a line containing `text`.
    @discardableResult
    public func waitForLog(_ text: String, timeout: Double = 30) -> Bool {
        waitFor(timeout: timeout) { $0.logText.contains(text) }
    }

    /// Everything the server has logged so far.
    public var log: String {
        condition.lock()
        defer { condition.unlock() }
        return logText
    }

    public var address: String { "\(host):\(port)" }

    public var pid: Int32 { process.processIdentifier }

    /// Sends `signal` and waits for the exit; returns the exit status (or -1 on timeout).
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: Double = 60) -> Int32 {
        if process.isRunning { kill(process.processIdentifier, signal) }
        guard waitFor(timeout: timeout, { $0.exited }) else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
