import Foundation

/// Runs a program and collects its output; a thin layer over `Process` for tests and benchmarks.
public struct ProgramResult: Sendable {
    public var status: Int32
    public var stdout: Data
    public var stderr: String
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
}

public enum ProgramError: Error, CustomStringConvertible {
    case notFound(String)
    case failed(String, ProgramResult)

    public var description: String {
        switch self {
        case .notFound(let name): "\(name) not found on PATH"
        case .failed(let command, let result): "\(command) exited \(result.status): \(result.stderr)"
        }
    }
}

/// Finds `name` on PATH.
public func findProgram(_ name: String) -> String? {
    if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    for folder in path.split(separator: ":") {
        let candidate = "\(folder)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

/// Runs `program` to completion. Standard input gets `input` (or nothing).
@discardableResult
public func runProgram(
    _ program: String, _ arguments: [String], environment: [String: String] = [:], input: Data? = nil
) throws -> ProgramResult {
    let child = try Subprocess(program, arguments, environment: environment, pipeInput: true)
    let inputHandle = child.standardInput!
    // Read both outputs while writing, so a chatty child never blocks on a full pipe.
    let errorData = ErrorCollector(child.standardError!)
    let outputData = ErrorCollector(child.standardOutput!)
    if let input { try? inputHandle.write(contentsOf: input) }
    try inputHandle.close()
    let status = child.wait() ?? -1
    return ProgramResult(status: status, stdout: outputData.data(), stderr: errorData.text())
}

/// Drains a pipe on its own thread.
final class ErrorCollector: @unchecked Sendable {
    // Written by the reader thread before `done` is signalled, read after it.
    private var collected = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread { [self] in
            collected = handle.readDataToEndOfFile()
            done.signal()
        }.start()
    }

    func data() -> Data {
        done.wait()
        done.signal()
        return collected
    }

    func text() -> String { String(decoding: data(), as: UTF8.self) }
}

/// Raises this process's descriptor limit to the hard limit, for tests that open many sockets.
public func raiseDescriptorLimit() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}
