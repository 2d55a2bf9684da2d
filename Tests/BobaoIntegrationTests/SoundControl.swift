import BobaoTestSupport
import Foundation

/// `pactl` against the test run's sound server, for tests that add sinks, change the default sink or load a
/// module for their length. `close()` (in a `defer`) puts the default sink back and unloads what was loaded,
/// last first, so the shared server is left as the test found it.
final class SoundControl {
    let connection: TestSoundServer.Connection
    private var modules: [String] = []
    private var originalDefault: String?

    init(_ connection: TestSoundServer.Connection) {
        self.connection = connection
    }

    /// `prefix_` and a few random letters: a sink name no other test run uses.
    static func uniqueName(_ prefix: String) -> String {
        prefix + "_" + UUID().uuidString.prefix(6).lowercased()
    }

    @discardableResult
    func pactl(_ arguments: String...) throws -> String {
        try pactl(arguments)
    }

    func pactl(_ arguments: [String]) throws -> String {
        let result = try runProgram("pactl", arguments, environment: connection.clientEnvironment)
        guard result.status == 0 else { throw ProgramError.failed("pactl \(arguments.joined(separator: " "))", result) }
        return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Loads a module until `close()` (or `unload`); returns its index.
    @discardableResult
    func load(_ module: String, _ arguments: String...) throws -> String {
        let index = try pactl(["load-module", module] + arguments)
        modules.append(index)
        return index
    }

    func unload(_ index: String) throws {
        modules.removeAll { $0 == index }
        try pactl("unload-module", index)
    }

    /// A null sink named `name` until `close()`; returns its module's index.
    @discardableResult
    func addNullSink(_ name: String) throws -> String {
        try load("module-null-sink", "sink_name=\(name)")
    }

    func defaultSink() throws -> String { try pactl("get-default-sink") }

    /// Makes `name` the default sink until `close()`.
    func setDefaultSink(_ name: String) throws {
        if originalDefault == nil { originalDefault = try defaultSink() }
        try pactl("set-default-sink", name)
    }

    /// The state `pactl list sinks short` gives sink `name` (RUNNING, IDLE, SUSPENDED), or nil.
    func sinkState(_ name: String) throws -> String? {
        for line in try pactl("list", "sinks", "short").split(separator: "\n") {
            let fields = line.split(separator: "\t")
            if fields.count >= 5, fields[1] == name { return String(fields[4]) }
        }
        return nil
    }

    func close() {
        if let originalDefault { _ = try? pactl("set-default-sink", originalDefault) }
        originalDefault = nil
        for index in modules.reversed() { _ = try? pactl("unload-module", index) }
        modules = []
    }
}

extension ServerProcess {
    /// The `sound` object of the server's status line.
    func soundStatus() throws -> [String: Any] {
        let line = try exchange(#"{"cmd": "status"}"# + "\n").first ?? ""
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        return object?["sound"] as? [String: Any] ?? [:]
    }

    /// The log lines that contain `text`.
    func logLines(containing text: String) -> [Substring] {
        log.split(separator: "\n").filter { $0.contains(text) }
    }
}

extension MonitorRecorder {
    /// Waits until `seconds` of sound have been recorded since the first loud sample at or after sample
    /// `start`; false on timeout.
    @discardableResult
    func waitUntilHeard(seconds: Double, after start: Int, timeout: Double = 10) -> Bool {
        let rate = sampleRate
        return waitUntil(timeout: timeout) { samples in
            guard samples.count > start,
                  let first = SignalAnalysis(Array(samples[start...]), sampleRate: rate).firstLoudSample()
            else { return false }
            return Double(samples.count - start - first) >= seconds * Double(rate)
        }
    }
}
