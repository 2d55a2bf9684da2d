import CTestSupport
import Foundation

/// Which sound server the tests' private servers are. `scripts/test.sh` runs the sound suites twice: against
/// PulseAudio, then with `BOBAO_SOUND_SERVER=pipewire` (set by scripts/pipewire-private.sh) against PipeWire
/// with its PulseAudio server, pipewire-pulse.
public enum SoundServerKind: Sendable {
    case pulseAudio
    case pipeWire

    public static var current: SoundServerKind {
        ProcessInfo.processInfo.environment["BOBAO_SOUND_SERVER"] == "pipewire" ? .pipeWire : .pulseAudio
    }
}

/// `PrivatePulseServer` on PipeWire: a session D-Bus, pipewire, wireplumber and pipewire-pulse, each with
/// HOME, XDG_RUNTIME_DIR and the XDG folders in the server's directory, as scripts/pipewire-private.sh
/// starts them. Their process ids are kept in `DIR/NAME.pid`, their output in `DIR/NAME.log`.
enum PrivatePipeWire {
    /// In the order they start; they stop in the reverse order.
    static let processes = ["dbus-daemon", "pipewire", "wireplumber", "pipewire-pulse"]

    /// pipewire-pulse's socket, for `PULSE_SERVER`.
    static func address(directory: String) -> String { "unix:\(directory)/pulse/native" }

    static func environment(directory: String) -> [String: String] {
        [
            "HOME": directory, "XDG_RUNTIME_DIR": directory, "XDG_CONFIG_HOME": directory + "/config",
            "XDG_STATE_HOME": directory + "/state", "XDG_DATA_HOME": directory + "/data",
            "XDG_CACHE_HOME": directory + "/cache", "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(directory)/bus",
        ]
    }

    /// Starts the daemons, loads the null sink `sinkName` and what `extraConfiguration` asks for, and
    /// returns once wireplumber, which links streams to sinks, has made the requested sink the default.
    ///
    /// `extraConfiguration` holds PulseAudio configuration lines, run as `pactl` commands.
    /// `load-module module-suspend-on-idle timeout=N` has no pipewire-pulse module: wireplumber suspends
    /// idle sinks, after the sink's `session.suspend-timeout-seconds` (5 s unless set), so it becomes
    /// that property on every null sink loaded.
    static func start(directory: String, sinkName: String, extraConfiguration: [String]) throws {
        var commands = [["load-module", "module-null-sink", "sink_name=\(sinkName)"], ["set-default-sink", sinkName]]
        var suspendTimeout: String?
        for line in extraConfiguration {
            let words = line.split(separator: " ").map(String.init)
            if words.starts(with: ["load-module", "module-suspend-on-idle"]) {
                suspendTimeout = words.first { $0.hasPrefix("timeout=") }.map { String($0.dropFirst("timeout=".count)) } ?? "5"
            } else {
                commands.append(words)
            }
        }
        if let suspendTimeout {
            commands = commands.map {
                $0.starts(with: ["load-module", "module-null-sink"])
                    ? $0 + ["sink_properties=session.suspend-timeout-seconds=\(suspendTimeout)"] : $0
            }
        }
        let defaultSink = commands.last { $0.first == "set-default-sink" }?.last ?? sinkName

        for folder in ["config/wireplumber/main.lua.d", "state", "data", "cache"] {
            try FileManager.default.createDirectory(atPath: "\(directory)/\(folder)", withIntermediateDirectories: true)
        }
        try Self.forgetStreams.write(
            toFile: "\(directory)/config/wireplumber/main.lua.d/51-bobao-test.lua", atomically: true, encoding: .utf8)
        let environment = environment(directory: directory)
        do {
            // --fork returns once the bus accepts connections.
            let bus = try runProgram("dbus-daemon", [
                "--session", "--address=unix:path=\(directory)/bus", "--fork", "--print-pid=1",
            ], environment: environment)
            guard bus.status == 0 else { throw ProgramError.failed("dbus-daemon", bus) }
            try bus.stdoutText.write(toFile: pidFile(directory, "dbus-daemon"), atomically: true, encoding: .utf8)
            // Through sh, to send their output to files and to leave out the test run's own sound-server
            // variables; exec keeps the process id. wireplumber and pipewire-pulse give up at once when
            // pipewire's socket does not answer, so they start once `pw-cli info 0` gets an answer.
            for name in processes.dropFirst() {
                let child = try Subprocess("/bin/sh", [
                    "-c", "unset PULSE_SERVER PIPEWIRE_REMOTE PIPEWIRE_RUNTIME_DIR PULSE_RUNTIME_PATH; exec \"$0\" >\"$1\" 2>&1",
                    name, "\(directory)/\(name).log",
                ], environment: environment, pipeOutput: false, pipeError: false)
                try String(child.pid).write(toFile: pidFile(directory, name), atomically: true, encoding: .utf8)
                if name == "pipewire" {
                    try waitUntil(directory: directory, "pw-cli info 0 answers") {
                        try runProgram("pw-cli", ["info", "0"], environment: environment).status == 0
                    }
                }
            }
            try awaitInfo(directory: directory, line: "Server Name: PulseAudio (on PipeWire")
            for command in commands { try pactl(directory: directory, command) }
            // Wireplumber, not pipewire-pulse, decides the default sink: seeing it means streams get linked.
            try awaitInfo(directory: directory, line: "Default Sink: \(defaultSink)\n")
        } catch {
            let logs = processes.map { name in
                "\(name): " + ((try? String(contentsOfFile: "\(directory)/\(name).log", encoding: .utf8)) ?? "")
            }
            stop(directory: directory, signal: SIGTERM)
            throw ProgramError.failed("PipeWire", ProgramResult(
                status: -1, stdout: Data(), stderr: "\(error)\n" + logs.joined(separator: "\n")))
        }
    }

    /// pipewire-pulse's process id, which plays PulseAudio's part.
    static func pid(directory: String) -> Int32? { pid(directory, "pipewire-pulse") }

    /// Sends `signal` to every process, pipewire-pulse first, and waits (at most 10 s each) for each to exit.
    static func stop(directory: String, signal: Int32) {
        for name in processes.reversed() {
            guard let pid = pid(directory, name) else { continue }
            let pidfd = bobao_pidfd_open(pid)
            if pidfd >= 0 {
                kill(pid, signal)
                var poller = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
                _ = poll(&poller, 1, 10_000)
                close(pidfd)
            }
            try? FileManager.default.removeItem(atPath: pidFile(directory, name))
        }
    }

    private static func pidFile(_ directory: String, _ name: String) -> String { "\(directory)/\(name).pid" }

    private static func pid(_ directory: String, _ name: String) -> Int32? {
        guard let text = try? String(contentsOfFile: pidFile(directory, name), encoding: .utf8) else { return nil }
        return Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    private static func pactl(directory: String, _ arguments: [String]) throws {
        let result = try runProgram("pactl", arguments, environment: ["PULSE_SERVER": address(directory: directory)])
        guard result.status == 0 else { throw ProgramError.failed("pactl \(arguments.joined(separator: " "))", result) }
    }

    /// Polls `pactl info` until it prints `line`.
    private static func awaitInfo(directory: String, line: String) throws {
        try waitUntil(directory: directory, "pactl info prints '\(line)'") {
            let info = try runProgram("pactl", ["info"], environment: ["PULSE_SERVER": address(directory: directory)])
            return info.status == 0 && info.stdoutText.contains(line)
        }
    }

    /// Polls `condition` every 50 ms, for at most 10 s; fails at once when a daemon has exited.
    private static func waitUntil(directory: String, _ what: String, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(10)
        while try !condition() {
            for name in processes {
                if let pid = pid(directory, name), kill(pid, 0) != 0 {
                    throw ProgramError.failed(name, ProgramResult(status: -1, stdout: Data(), stderr: "exited"))
                }
            }
            guard Date() < deadline else {
                throw ProgramError.failed("PipeWire", ProgramResult(status: -1, stdout: Data(), stderr: "no \(what) within 10 s"))
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// WirePlumber's fragment that turns off its memory of stream volumes and targets (restore-stream): a
    /// test's stream would otherwise start with the volume an earlier test's stream of the same name was
    /// left at. scripts/pipewire-private.sh writes the same file.
    static let forgetStreams = "stream_defaults.enabled = false\n"
}
