import BobaoCore
import BobaoPlatform
import Glibc

/// The chimes an announcement can ask for by name: the built-in two-tone `ding` and every `NAME.wav` of the
/// chimes folder (`voices/chimes`), read once at start and resampled to the player's rate, so playing one
/// is a plain write.
///
/// A file that cannot be used (a bad name, not a WAV Bobao reads, too long, unreadable) is logged once with
/// the reason and left out; a good `ding.wav` replaces the built-in chime.
public struct ChimeLibrary: Sendable {
    private let chimes: [String: [Int16]]

    /// The chime names, sorted; `ding` is always one.
    public let names: [String]

    /// The largest chime file read: room for 10 s of 96 kHz stereo 64-bit float, with chunks besides.
    public static let maximumFileBytes = 16 << 20

    /// Loads the built-in chime and the folder's `*.wav` files.
    /// - Parameters:
    ///   - directory: the chimes folder, `<voices folder>/chimes`; nil or missing for the built-in only.
    ///   - sampleRate: the player's rate; every chime is resampled to it.
    ///   - log: where skipped files (and the chimes found) are reported.
    public init(directory: String?, sampleRate: Int, log: (String) -> Void) {
        var chimes = [ChimeTone.builtInName: ChimeTone.twoTone(sampleRate: sampleRate)]
        var loaded: [String] = []
        if let directory, FileSystem.isDirectory(directory) {
            if let entries = FileSystem.contentsOfDirectory(directory) {
                for file in entries.sorted() where file.hasSuffix(".wav") {
                    let name = String(file.dropLast(4)), path = directory + "/" + file
                    switch Self.load(path, name: name, sampleRate: sampleRate) {
                    case .success(let samples):
                        chimes[name] = samples
                        loaded.append(name)
                    case .failure(let reason):
                        log(LogPriority.warning + "chime file \(path) skipped: \(reason.text)")
                    }
                }
                if !loaded.isEmpty { log("chimes from \(directory): \(loaded.joined(separator: ", "))") }
            } else {
                log(LogPriority.warning + "chimes folder \(directory) cannot be read (\(String(cString: strerror(errno)))); only the built-in '\(ChimeTone.builtInName)'")
            }
        }
        self.chimes = chimes
        names = chimes.keys.sorted()
    }

    /// The chime's samples at the player's rate, or nil for a name the library does not have.
    public func samples(named name: String) -> [Int16]? {
        chimes[name]
    }

    /// A chime name is a file name without `.wav`: ASCII letters, digits, `-` and `_`, at most 64 of them.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }

    /// Why a chime file was left out.
    struct Skipped: Error {
        let text: String
    }

    private static func load(_ path: String, name: String, sampleRate: Int) -> Result<[Int16], Skipped> {
        guard isValidName(name) else {
            return .failure(Skipped(text: "a chime name holds only ASCII letters, digits, '-' and '_' (at most 64)"))
        }
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(Skipped(text: String(cString: strerror(errno)))) }
        guard info.st_mode & S_IFMT == S_IFREG else { return .failure(Skipped(text: "not a regular file")) }
        guard info.st_size <= maximumFileBytes else {
            return .failure(Skipped(text: "\(info.st_size) bytes, more than the \(maximumFileBytes >> 20) MiB a chime file may have"))
        }
        do {
            let decoded = try WAVFile.decodeMono16(try FileSystem.read(path))
            return .success(WAVFile.resample(decoded.samples, from: decoded.sampleRate, to: sampleRate))
        } catch let error as WAVFile.DecodingError {
            return .failure(Skipped(text: error.description))
        } catch {
            return .failure(Skipped(text: "\(error)"))
        }
    }
}
