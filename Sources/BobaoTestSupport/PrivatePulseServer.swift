import CTestSupport
import Foundation
import Synchronization

/// A PulseAudio server of the test's own: a temporary folder for its socket, HOME and runtime dir, a
/// null sink, and nothing from any user's sound server.
///
/// Started with `--daemonize=yes`, whose parent exits only once the server accepts clients: that exit is
/// the readiness event. Stopped through its pid file; its exit is awaited through a pidfd.
///
/// With `BOBAO_SOUND_SERVER=pipewire` it is a private PipeWire with pipewire-pulse instead (see
/// `PrivatePipeWire`), started, stopped and restarted as a whole, which clients reach the same way.
public final class PrivatePulseServer: Sendable {
    public let directory: String
    public let sinkName: String
    /// `unix:DIR/native` (on PipeWire `unix:DIR/pulse/native`), for `PULSE_SERVER`.
    public let address: String
    public let kind: SoundServerKind
    private let extraConfiguration: [String]

    /// Starts a server with one null sink named `sinkName` as its default sink.
    /// - Parameter extraConfiguration: more lines for its configuration script, such as
    ///   `load-module module-suspend-on-idle timeout=1`.
    public init(sinkName: String = "bobao_test", extraConfiguration: [String] = []) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("bobao-pulse-\(UUID().uuidString.prefix(8))").path
        self.sinkName = sinkName
        kind = SoundServerKind.current
        address = kind == .pipeWire ? PrivatePipeWire.address(directory: directory) : "unix:\(directory)/native"
        self.extraConfiguration = extraConfiguration
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try start()
    }

    /// The configuration script, so a restart builds the same server.
    private var configuration: String {
        ([
            "load-module module-native-protocol-unix auth-anonymous=1 socket=\(directory)/native",
            "load-module module-null-sink sink_name=\(sinkName)",
            "set-default-sink \(sinkName)",
        ] + extraConfiguration).joined(separator: "\n") + "\n"
    }

    /// Environment for the server and its clients.
    public var environment: [String: String] {
        if kind == .pipeWire { return PrivatePipeWire.environment(directory: directory).merging(clientEnvironment) { $1 } }
        return ["PULSE_SERVER": address, "HOME": directory, "XDG_RUNTIME_DIR": directory]
    }

    /// Environment for clients only.
    public var clientEnvironment: [String: String] { ["PULSE_SERVER": address] }

    /// Starts (or restarts) the daemon; returns once it accepts clients.
    public func start() throws {
        if kind == .pipeWire {
            return try PrivatePipeWire.start(
                directory: directory, sinkName: sinkName, extraConfiguration: extraConfiguration)
        }
        let script = directory + "/server.pa"
        try configuration.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try runProgram("pulseaudio", [
            "-n", "-F", script, "--exit-idle-time=-1", "--daemonize=yes", "--use-pid-file=yes",
            "--log-target=file:\(directory)/pulseaudio.log",
        ], environment: environment)
        guard result.status == 0 else {
            let log = (try? String(contentsOfFile: directory + "/pulseaudio.log", encoding: .utf8)) ?? ""
            throw ProgramError.failed("pulseaudio", ProgramResult(
                status: result.status, stdout: result.stdout, stderr: result.stderr + log))
        }
    }

    /// The daemon's process id, from its pid file (on PipeWire, pipewire-pulse's).
    public var pid: Int32? {
        if kind == .pipeWire { return PrivatePipeWire.pid(directory: directory) }
        guard let text = try? String(contentsOfFile: directory + "/pulse/pid", encoding: .utf8) else { return nil }
        return Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Sends `signal` to the daemon (on PipeWire, to each of its processes) and waits for it to exit.
    public func stop(signal: Int32 = SIGTERM) {
        if kind == .pipeWire { return PrivatePipeWire.stop(directory: directory, signal: signal) }
        guard let pid else { return }
        let pidfd = bobao_pidfd_open(pid)
        guard pidfd >= 0 else { return }
        defer { close(pidfd) }
        kill(pid, signal)
        var poller = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        _ = poll(&poller, 1, 10_000)
        try? FileManager.default.removeItem(atPath: directory + "/pulse/pid")
    }

    /// Runs `pactl` against this server.
    @discardableResult
    public func pactl(_ arguments: String...) throws -> String {
        let result = try runProgram("pactl", arguments, environment: clientEnvironment)
        guard result.status == 0 else { throw ProgramError.failed("pactl \(arguments.joined(separator: " "))", result) }
        return result.stdoutText
    }

    /// The null sink's state as `pactl list sinks short` prints it: RUNNING, IDLE or SUSPENDED.
    public func sinkState() throws -> String {
        let lines = try pactl("list", "sinks", "short").split(separator: "\n")
        for line in lines {
            let fields = line.split(separator: "\t")
            if fields.count >= 5, fields[1] == sinkName { return String(fields[4]) }
        }
        return "MISSING"
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// The sound server a test run uses.
public enum TestSoundServer {
    public struct Connection: Sendable {
        public var address: String
        public var sinkName: String
        public var clientEnvironment: [String: String] { ["PULSE_SERVER": address] }
    }

    private static let started = Mutex<Result<PrivatePulseServer, any Error>?>(nil)

    /// The server `scripts/test.sh` started (`PULSE_SERVER` and `BOBAO_TEST_SINK`), else a private one that
    /// this test process starts and keeps. Throws, and so fails the test, when neither can be had: a test
    /// that needs PulseAudio never passes without one.
    public static func shared() throws -> Connection {
        let environment = ProcessInfo.processInfo.environment
        if let address = environment["PULSE_SERVER"], let sink = environment["BOBAO_TEST_SINK"] {
            return Connection(address: address, sinkName: sink)
        }
        let server = try started.withLock { cached in
            if let cached { return try cached.get() }
            let made = Result { try PrivatePulseServer() }
            cached = made
            return try made.get()
        }
        return Connection(address: server.address, sinkName: server.sinkName)
    }
}
