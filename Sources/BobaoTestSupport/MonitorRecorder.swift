import Foundation

/// Records what reaches a sink, from its monitor source, with `parec`, as 16-bit mono PCM.
///
/// `init` returns once the record stream exists (parec's verbose "Stream successfully created" line) and
/// audio flows from it, so nothing played after it is missed. Each arriving chunk wakes `waitUntil`. parec stops when the recorder
/// is stopped or released.
public final class MonitorRecorder: @unchecked Sendable {
    // `process` is touched only by the creating thread in `init`, `stop` and `deinit`; the reader threads
    // hold only `state`, so they never keep the recorder (and parec) alive.
    private let state = RecordingState()
    private let process: Subprocess
    public let sampleRate: Int

    /// - Parameters:
    ///   - address: the PulseAudio server (`PULSE_SERVER`).
    ///   - sinkName: the sink whose monitor is recorded.
    public init(address: String, sinkName: String, sampleRate: Int = 22050, latencyMilliseconds: Int = 20) throws {
        self.sampleRate = sampleRate
        process = try Subprocess("parec", [
            "-v", "-d", "\(sinkName).monitor", "--raw", "--format=s16le", "--rate=\(sampleRate)", "--channels=1",
            "--latency-msec=\(latencyMilliseconds)",
        ], environment: ["PULSE_SERVER": address])
        let stdoutHandle = process.standardOutput!, stderrHandle = process.standardError!
        let state = self.state
        Thread { state.readSamples(stdoutHandle) }.start()
        Thread { state.readMessages(stderrHandle) }.start()
        state.condition.lock()
        let deadline = Date().addingTimeInterval(10)
        while !state.streamReady && !state.finished && state.condition.wait(until: deadline) {}
        let ready = state.streamReady, messages = state.stderrText
        state.condition.unlock()
        guard ready else {
            process.signal(SIGTERM)
            throw ProgramError.failed("parec", ProgramResult(status: -1, stdout: Data(), stderr: messages))
        }
        // Ready means audio is flowing: a monitor that has just attached may deliver nothing until the
        // sink's next render, and speech that starts in that gap would be heard only in part.
        let flowing = waitUntil(timeout: 10) { $0.count >= sampleRate / 10 }
        guard flowing else {
            process.signal(SIGTERM)
            throw ProgramError.failed("parec", ProgramResult(status: -1, stdout: Data(), stderr: "no audio from \(sinkName).monitor"))
        }
    }

    /// Everything recorded so far.
    public var samples: [Int16] {
        state.condition.lock()
        defer { state.condition.unlock() }
        return state.buffer
    }

    /// Waits, waking on every recorded chunk, until `predicate` holds for the recording or `timeout`
    /// seconds pass. Returns whether it held.
    @discardableResult
    public func waitUntil(timeout: Double, _ predicate: ([Int16]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        state.condition.lock()
        defer { state.condition.unlock() }
        while !predicate(state.buffer) {
            if state.finished || !state.condition.wait(until: deadline) { return predicate(state.buffer) }
        }
        return true
    }

    /// Waits until the recording holds `count` utterances followed by `quiet` seconds of silence (or `timeout`
    /// passes); returns the utterances heard.
    public func waitForUtterances(_ count: Int, quiet: Double, timeout: Double = 30) -> [SignalAnalysis.Segment] {
        _ = waitUntil(timeout: timeout) { samples in
            let analysis = SignalAnalysis(samples, sampleRate: sampleRate)
            let segments = analysis.segments()
            return segments.count >= count && analysis.duration - segments.last!.end >= quiet
        }
        return analysis.segments()
    }

    /// Waits until `seconds` more of audio have been recorded.
    public func record(seconds: Double) {
        let target = samples.count + Int(seconds * Double(sampleRate))
        waitUntil(timeout: seconds * 3 + 5) { $0.count >= target }
    }

    /// Stops recording and returns everything recorded.
    public func stop() -> [Int16] {
        process.signal(SIGTERM)
        process.wait()
        state.condition.lock()
        while !state.finished { state.condition.wait() }
        defer { state.condition.unlock() }
        return state.buffer
    }

    /// The recording analysed.
    public var analysis: SignalAnalysis { SignalAnalysis(samples, sampleRate: sampleRate) }

    deinit {
        process.signal(SIGTERM)
    }
}

/// What the reader threads fill; guarded by `condition`.
private final class RecordingState: @unchecked Sendable {
    let condition = NSCondition()
    var buffer: [Int16] = []
    var pendingByte: UInt8?
    var finished = false
    var streamReady = false
    var stderrText = ""

    func readSamples(_ handle: FileHandle) {
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

    func readMessages(_ handle: FileHandle) {
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
}
