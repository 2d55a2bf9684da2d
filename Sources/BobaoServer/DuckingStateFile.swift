import BobaoAudio
import BobaoCore
import BobaoPlatform
import Glibc
import Synchronization

/// The ducker's state file next to the spool (`PATH-ducking`): the streams Bobao lowered, written before
/// it lowers them and removed once they are restored, so a Bobao killed meanwhile restores them at its next
/// start. Written to a temporary file and renamed over, so a crash leaves the old file or the new one, never
/// half of one. Not fsynced: it repairs a crashed process, and a power cut ends the streams it names anyway.
///
/// Nothing here stops Bobao: a damaged file is logged and ignored, a file that cannot be written is logged
/// (once, until writing works again) and ducking goes on without crash recovery.
public final class DuckingStateFile: DuckingStore {
    public let path: String
    private let log: @Sendable (String) -> Void
    /// The failure last logged, so a disk that stays full is not logged at every announcement.
    private let failing = Mutex<String?>(nil)
    /// A larger file is not Bobao's (1024 streams take about 100 KiB).
    static let maximumBytes = 1 << 20

    public init(path: String, log: @escaping @Sendable (String) -> Void) {
        self.path = path
        self.log = log
    }

    /// The state file of the spool at `spoolPath`.
    public convenience init(spoolPath: String, log: @escaping @Sendable (String) -> Void) {
        self.init(path: spoolPath + "-ducking", log: log)
    }

    public var exists: Bool { FileSystem.exists(path) }

    public func load() -> [DuckedStream] {
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG || info.st_size > Self.maximumBytes {
            log("the ducking state \(path) is not a small regular file; ignored")
            return []
        }
        let bytes: [UInt8]
        do { bytes = try FileSystem.read(path) } catch {
            if error.errno != ENOENT { log("cannot read the ducking state \(path) (\(error)); ignored") }
            return []
        }
        guard let text = String(validating: bytes, as: UTF8.self), let (streams, damaged) = DuckingLedger.decode(text)
        else {
            log(LogPriority.warning + "the ducking state \(path) is damaged; ignored (it is replaced at the next duck)")
            return []
        }
        if damaged > 0 { log("ignored \(damaged) damaged line(s) of the ducking state \(path)") }
        return streams
    }

    public func save(_ streams: [DuckedStream]) {
        let failure = streams.isEmpty ? remove() : write(DuckingLedger.encode(streams))
        failing.withLock { last in
            if let failure, failure != last {
                log(LogPriority.warning + "cannot write the ducking state \(path): \(failure); ducking goes on, but volumes lowered when "
                    + "bobao is killed are not restored at its next start")
            } else if failure == nil, last != nil {
                log("the ducking state \(path) can be written again")
            }
            last = failure
        }
    }

    private func remove() -> String? {
        guard unlink(path) == 0 || errno == ENOENT else { return String(cString: strerror(errno)) }
        return nil
    }

    /// Writes `text` to `PATH.tmp` (mode 0600, never through a link) and renames it over `PATH`.
    private func write(_ text: String) -> String? {
        let temporary = path + ".tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                unlink(temporary)
                return reason
            }
            offset += written
        }
        guard close(fd) == 0, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            return reason
        }
        return nil
    }
}

extension StreamDucker {
    /// The ducker `bobao serve` runs, or nil: with `--duck 1` there is none, unless a state file left by a
    /// Bobao that was killed while it ducked still has volumes to restore.
    public static func make(for configuration: ServerConfiguration, log: EventLog) -> StreamDucker? {
        let store = configuration.spoolPath.map { DuckingStateFile(spoolPath: $0, log: { log($0) }) }
        guard configuration.duckFactor < 1 || store?.exists == true else { return nil }
        var ducking = DuckingConfiguration()
        ducking.factor = configuration.duckFactor
        ducking.sinkName = configuration.player.sinkName
        ducking.serverAddress = configuration.player.serverAddress
        return StreamDucker(configuration: ducking, store: store, log: { log($0) })
    }
}
