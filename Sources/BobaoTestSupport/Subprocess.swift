import CTestSupport
import Foundation

/// A child process with clean signal state and pipes on the streams asked for (see `bobao_spawn`).
public final class Subprocess: @unchecked Sendable {
    public let pid: pid_t
    /// Write end of its standard input, if piped.
    public let standardInput: FileHandle?
    /// Read ends of its output streams, if piped.
    public let standardOutput: FileHandle?
    public let standardError: FileHandle?
    private let exit = DispatchSemaphore(value: 0)
    // Written by the waiting thread before `exit` is signalled.
    private var status: Int32 = -1
    private var exitedFlag = false
    private let lock = NSLock()

    /// - Parameters:
    ///   - pipeInput/pipeOutput/pipeError: give the child a pipe (else /dev/null).
    public init(
        _ program: String, _ arguments: [String], environment: [String: String] = [:],
        pipeInput: Bool = false, pipeOutput: Bool = true, pipeError: Bool = true
    ) throws {
        guard let path = findProgram(program) else { throw ProgramError.notFound(program) }
        let env = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        func makePipe(_ wanted: Bool) throws -> (read: Int32, write: Int32)? {
            guard wanted else { return nil }
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            // Close-on-exec, so no other child inherits them (the spawned child gets its copies by dup2).
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return (fds[0], fds[1])
        }
        let input = try makePipe(pipeInput), output = try makePipe(pipeOutput), error = try makePipe(pipeError)
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        // The child reads the input pipe and writes the output pipes; this process keeps the other ends.
        let spawnStatus = bobao_spawn(
            path, &argv, &envp, input?.read ?? -1, output?.write ?? -1, error?.write ?? -1, &child)
        if let input { close(input.read) }
        if let output { close(output.write) }
        if let error { close(error.write) }
        guard spawnStatus == 0 else {
            [input?.write, output?.read, error?.read].compactMap { $0 }.forEach { close($0) }
            throw POSIXError(.init(rawValue: spawnStatus) ?? .EIO)
        }
        pid = child
        standardInput = input.map { FileHandle(fileDescriptor: $0.write, closeOnDealloc: true) }
        standardOutput = output.map { FileHandle(fileDescriptor: $0.read, closeOnDealloc: true) }
        standardError = error.map { FileHandle(fileDescriptor: $0.read, closeOnDealloc: true) }
        let spawned = child
        Thread { [self] in
            var raw: Int32 = 0
            while waitpid(spawned, &raw, 0) < 0 && errno == EINTR {}
            lock.lock()
            status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            exitedFlag = true
            lock.unlock()
            exit.signal()
        }.start()
    }

    public var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !exitedFlag
    }

    /// Waits for the exit; returns the status (128 + N when killed by signal N), or nil on timeout.
    @discardableResult
    public func wait(timeout: Double = .infinity) -> Int32? {
        let result = timeout.isInfinite ? { exit.wait(); return DispatchTimeoutResult.success }()
            : exit.wait(timeout: .now() + timeout)
        guard result == .success else { return nil }
        exit.signal()  // let later waits return too
        lock.lock()
        defer { lock.unlock() }
        return status
    }

    public func signal(_ number: Int32) {
        if isRunning { kill(pid, number) }
    }
}
