import BobaoTestSupport
import Foundation

/// A sink input as `pactl -f json list sink-inputs` shows it.
struct SinkInput {
    var index: Int
    var sink: Int
    /// Per channel, in `pa_volume_t` (65536 is 100 %).
    var volume: [Int]
    var properties: [String: String]

    /// Every sink input on the server at `address`.
    static func list(address: String) throws -> [SinkInput] {
        let result = try runProgram("pactl", ["-f", "json", "list", "sink-inputs"], environment: ["PULSE_SERVER": address])
        guard result.status == 0 else { throw ProgramError.failed("pactl list sink-inputs", result) }
        let objects = try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]] ?? []
        return objects.compactMap { object in
            guard let index = object["index"] as? Int, let sink = object["sink"] as? Int,
                  let volume = object["volume"] as? [String: [String: Any]] else { return nil }
            return SinkInput(
                index: index, sink: sink, volume: volume.values.compactMap { $0["value"] as? Int },
                properties: object["properties"] as? [String: String] ?? [:])
        }
    }
}

/// A steady 440 Hz tone that `pacat` plays for two minutes: the background music of the ducking tests.
final class ToneStream: @unchecked Sendable {
    static let frequency = 440.0
    static let amplitude = 4000.0
    static let sampleRate = 22050
    /// 120 s of the tone as raw 16-bit mono, written once per test process (a whole number of cycles a second,
    /// so it is seamless).
    static let file: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-tone-\(UUID()).raw").path
        let second = (0..<sampleRate).map { Int16(amplitude * sin(2 * .pi * frequency * Double($0) / Double(sampleRate))) }
        var data = Data()
        second.withUnsafeBytes { data.append(contentsOf: $0) }
        let all = Data((0..<120).flatMap { _ in data })
        _ = FileManager.default.createFile(atPath: path, contents: all)
        return path
    }()

    let process: Subprocess
    let address: String

    /// - Parameters:
    ///   - sink: where to play (nil: the default sink).
    ///   - properties: more `KEY=VALUE` stream properties (`application.id=…`).
    init(address: String, sink: String? = nil, properties: [String] = []) throws {
        self.address = address
        var arguments = [
            "--raw", "--format=s16le", "--rate=\(Self.sampleRate)", "--channels=1", "--stream-name=tone", "--latency-msec=50",
        ]
        if let sink { arguments += ["-d", sink] }
        arguments += properties.map { "--property=\($0)" }
        process = try Subprocess("pacat", arguments + [Self.file], environment: ["PULSE_SERVER": address])
    }

    /// Its sink input, once the server has it (polled: the server announces streams only to subscribers).
    func sinkInput(timeout: Double = 10) throws -> SinkInput? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let input = try SinkInput.list(address: address).first(where: {
                $0.properties["application.process.id"] == String(process.pid)
            }) { return input }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        return nil
    }

    /// Polls the stream's volume (first channel) until `predicate` holds or `timeout` passes.
    func waitForVolume(timeout: Double = 5, _ predicate: (Int) -> Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let volume = try sinkInput(timeout: 0)?.volume.first, predicate(volume) { return true }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        return false
    }

    var volume: Int? { (try? sinkInput(timeout: 0))?.volume.first }

    func stop() {
        process.signal(SIGTERM)
        process.wait()
    }

    deinit {
        process.signal(SIGTERM)
    }
}

extension SignalAnalysis {
    /// The tone's amplitude in `window`-second windows from `start` to `end` (seconds into the recording).
    func toneLevels(from start: Double, to end: Double, window: Double = 0.05) -> [Double] {
        let size = Int(window * Double(sampleRate))
        return stride(from: Int(start * Double(sampleRate)), to: Int(end * Double(sampleRate)) - size, by: size).map {
            toneAmplitude(frequency: ToneStream.frequency, from: $0, count: size)
        }
    }

    /// Where speech sounds, told apart from the tone: the second difference keeps speech's formants and
    /// hisses and takes the 440 Hz tone down by 36 dB.
    func speech(threshold: Double = 300) -> [Segment] {
        guard samples.count > 2 else { return [] }
        let differences = (2..<samples.count).map {
            Int16(clamping: Int(samples[$0]) - 2 * Int(samples[$0 - 1]) + Int(samples[$0 - 2]))
        }
        return SignalAnalysis(differences, sampleRate: sampleRate).segments(threshold: threshold)
    }
}

/// `x` in decibels relative to `reference`.
func decibels(_ x: Double, relativeTo reference: Double) -> Double {
    20 * log10(max(x, 1e-9) / reference)
}

/// The `fraction` quantile of `values` (0.5: the median).
func quantile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
}
