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
    guard let path = findProgram(program) else { throw ProgramError.notFound(program) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe(), err = Pipe(), inPipe = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = inPipe
    try process.run()
    if let input { inPipe.fileHandleForWriting.write(input) }
    try inPipe.fileHandleForWriting.close()
    // Read both pipes to the end before waiting, so a chatty child never blocks on a full pipe.
    let errorData = ErrorCollector(err.fileHandleForReading)
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProgramResult(status: process.terminationStatus, stdout: outData, stderr: errorData.text())
}

/// Drains a pipe on its own thread.
final class ErrorCollector: @unchecked Sendable {
    // Written by the reader thread before `done` is signalled, read after it.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }.start()
    }

    func text() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}
