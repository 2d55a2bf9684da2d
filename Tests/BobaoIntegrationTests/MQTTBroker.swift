import BobaoTestSupport
import Foundation
import Glibc

/// A private mosquitto for one test: its own config in a temporary folder, listening on a free loopback
/// port, stopped when released. `mosquitto_pub`/`mosquitto_sub` are the clients the tests publish and
/// read with.
final class MQTTBroker: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let port: UInt16
    let folder: URL
    private let process: Subprocess
    private let output = NSCondition()
    // Guarded by `output`.
    private var logText = ""

    /// - Parameters:
    ///   - port: where to listen; by default a free port.
    ///   - users: user → password; none: anonymous clients are allowed.
    /// Throws, naming what is missing, when mosquitto or its clients are not installed: the tests fail then,
    /// never skip (scripts/install-deps.sh installs them).
    init(port: UInt16? = nil, users: [String: String] = [:]) throws {
        for program in ["mosquitto", "mosquitto_pub", "mosquitto_sub"] where findProgram(program) == nil {
            throw Failure(description: "\(program) is missing: scripts/install-deps.sh installs mosquitto and mosquitto-clients")
        }
        self.port = try port ?? Self.freePort()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-mqtt-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var config = ["listener \(self.port) 127.0.0.1", "persistence false", "log_dest stderr", "log_type all"]
        // Started as root, mosquitto would switch to the mosquitto user, who cannot read this folder.
        if getuid() == 0 { config.append("user root") }
        if users.isEmpty {
            config.append("allow_anonymous true")
        } else {
            let file = folder.appendingPathComponent("passwords").path
            for (index, (user, password)) in users.sorted(by: { $0.key < $1.key }).enumerated() {
                let result = try runProgram("mosquitto_passwd", (index == 0 ? ["-c"] : []) + ["-b", file, user, password])
                guard result.status == 0 else { throw Failure(description: "mosquitto_passwd: \(result.stderr)") }
            }
            config += ["allow_anonymous false", "password_file \(file)"]
        }
        let configFile = folder.appendingPathComponent("mosquitto.conf")
        try (config.joined(separator: "\n") + "\n").write(to: configFile, atomically: true, encoding: .utf8)
        process = try Subprocess("mosquitto", ["-c", configFile.path])
        collect(process.standardError!)
        collect(process.standardOutput!)
        guard waitForLog("running", timeout: 10) else {
            process.signal(SIGKILL)
            throw Failure(description: "mosquitto did not start: \(log)")
        }
    }

    deinit {
        process.signal(SIGTERM)
        process.wait(timeout: 5)
        try? FileManager.default.removeItem(at: folder)
    }

    /// Stops the broker (a restart on the same port is a new `MQTTBroker(port:)`).
    func stop() {
        process.signal(SIGTERM)
        process.wait(timeout: 10)
    }

    var log: String {
        output.lock()
        defer { output.unlock() }
        return logText
    }

    /// Waits until the broker's log holds `text` `count` times.
    @discardableResult
    func waitForLog(_ text: String, count: Int = 1, timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        output.lock()
        defer { output.unlock() }
        while logText.components(separatedBy: text).count - 1 < count {
            if !output.wait(until: deadline) { return logText.components(separatedBy: text).count - 1 >= count }
        }
        return true
    }

    /// `mosquitto_pub -q 1` of `payload` to `topic`; the exit status.
    @discardableResult
    func publish(_ topic: String, _ payload: [UInt8], retain: Bool = false) throws -> Int32 {
        let file = folder.appendingPathComponent("payload-\(UUID().uuidString.prefix(8))")
        try Data(payload).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try runProgram("mosquitto_pub", clientArguments + ["-q", "1", "-t", topic, "-f", file.path] + (retain ? ["-r"] : []))
            .status
    }

    @discardableResult
    func publish(_ topic: String, _ text: String) throws -> Int32 { try publish(topic, Array(text.utf8)) }

    /// The first message on `topic` (a retained one at once), or nil after `seconds`.
    func firstMessage(_ topic: String, seconds: Int = 5) throws -> String? {
        let result = try runProgram("mosquitto_sub", clientArguments + ["-t", topic, "-C", "1", "-W", "\(seconds)"])
        return result.status == 0 ? String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .newlines) : nil
    }

    /// A `mosquitto_sub` reading `topic` in the background, for the messages that follow the retained one.
    func subscriber(_ topic: String, count: Int, seconds: Int = 15) throws -> Subprocess {
        try Subprocess("mosquitto_sub", clientArguments + ["-t", topic, "-C", "\(count)", "-W", "\(seconds)"])
    }

    var url: String { "mqtt://127.0.0.1:\(port)" }

    private var clientArguments: [String] { ["-h", "127.0.0.1", "-p", "\(port)", "-i", "bobao-test-\(UUID().uuidString.prefix(8))"] }

    private func collect(_ handle: FileHandle) {
        Thread { [weak self] in
            while true {
                let data = handle.availableData
                guard let self, !data.isEmpty else { return }
                output.lock()
                logText += String(decoding: data, as: UTF8.self)
                output.broadcast()
                output.unlock()
            }
        }.start()
    }

    /// A loopback port nothing listens on right now.
    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let status = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 ? getsockname(fd, pointer, &length) : -1
            }
        }
        guard status == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return UInt16(bigEndian: address.sin_port)
    }
}

extension Subprocess {
    /// Reads standard output until it holds `lines` lines or ends.
    func readLines(_ lines: Int) -> [String] {
        var text = ""
        while text.filter({ $0 == "\n" }).count < lines {
            let data = standardOutput!.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        return text.split(separator: "\n").map(String.init)
    }
}
