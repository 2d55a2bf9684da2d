import Foundation

/// Records what reaches a sink, from its monitor source, with `parec`, as 16-bit mono PCM.
///
/// `init` returns once the record stream exists (parec's verbose "Stream successfully created" line), so
/// nothing played after it is missed. Each arriving chunk wakes `waitUntil`.
public final class MonitorRecorder: @unchecked Sendable {
    // `buffer`, `finished` and `streamReady` are guarded by `condition`; `process` is touched only by the
    // creating thread in `init` and `stop`.
    private let condition = NSCondition()
    private var buffer: [Int16] = []
    private var pendingByte: UInt8?
    private var finished = false
    private var streamReady = false
    private var stderrText = ""
    private let process = Process()
    public let sampleRate: Int

    /// - Parameters:
    ///   - address: the PulseAudio server (`PULSE_SERVER`).
    ///   - sinkName: the sink whose monitor is recorded.
    public init(address: String, sinkName: String, sampleRate: Int = 22050, latencyMilliseconds: Int = 20) throws {
        self.sampleRate = sampleRate
        guard let parec = findProgram("parec") else { throw ProgramError.notFound("parec") }
        process.executableURL = URL(fileURLWithPath: parec)
        process.arguments = [
            "-v", "-d", "\(sinkName).monitor", "--raw", "--format=s16le", "--rate=\(sampleRate)", "--channels=1",
            "--latency-msec=\(latencyMilliseconds)",
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(["PULSE_SERVER": address]) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let stdoutHandle = out.fileHandleForReading, stderrHandle = err.fileHandleForReading
        Thread { [self] in readSamples(stdoutHandle) }.start()
        Thread { [self] in readMessages(stderrHandle) }.start()
        condition.lock()
        let deadline = Date().addingTimeInterval(10)
        while !streamReady && !finished && condition.wait(until: deadline) {}
        let ready = streamReady, messages = stderrText
        condition.unlock()
        guard ready else {
            process.terminate()
            throw ProgramError.failed("parec", ProgramResult(status: -1, stdout: Data(), stderr: messages))
        }
    }

    private func readSamples(_ handle: FileHandle) {
        while true {
            let data = handle.availableData
            condition.lock()
            if data.isEmpty {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            var bytes = [UInt8](data)
            if let pending = pendingByte { bytes.insert(pending, at: 0); pendingByte = nil }
            if bytes.count % 2 == 1 { pendingByte = bytes.removeLast() }
            buffer.reserveCapacity(buffer.count + bytes.count / 2)
            for i in stride(from: 0, to: bytes.count, by: 2) {
                buffer.append(Int16(bitPattern: UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8))
            }
            condition.broadcast()
            condition.unlock()
        }
    }

    private func readMessages(_ handle: FileHandle) {
        while true {
            let data = handle.availableData
            if data.isEmpty { return }
            condition.lock()
            stderrText += String(decoding: data, as: UTF8.self)
            if stderrText.contains("Stream successfully created") { streamReady = true }
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Everything recorded so far.
    public var samples: [Int16] {
        condition.lock()
        defer { condition.unlock() }
        return buffer
    }

    /// Waits, waking on every recorded chunk, until `predicate` holds for the recording or `timeout`
    /// seconds pass. Returns whether it held.
    @discardableResult
    public func waitUntil(timeout: Double, _ predicate: ([Int16]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(buffer) {
            if finished || !condition.wait(until: deadline) { return predicate(buffer) }
        }
        return true
    }

    /// Waits until `seconds` more of audio have been recorded.
    public func record(seconds: Double) {
        let target = samples.count + Int(seconds * Double(sampleRate))
        waitUntil(timeout: seconds * 3 + 5) { $0.count >= target }
    }

    /// Stops recording and returns everything recorded.
    public func stop() -> [Int16] {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        condition.lock()
        while !finished { condition.wait() }
        defer { condition.unlock() }
        return buffer
    }

    /// The recording analysed.
    public var analysis: SignalAnalysis { SignalAnalysis(samples, sampleRate: sampleRate) }

    deinit {
        if process.isRunning { process.terminate() }
    }
}
