import BobaoPlatform
import Glibc
import Synchronization

/// Private temporary folders for voice files eSpeak NG must load by path: `BASE/bobao-PID-HEX`, mode 0700,
/// all lower case and short (eSpeak NG 1.51 lower-cases a voice path and keeps at most 59 bytes of it).
/// Each is removed with its files when the process exits; folders that runs killed by a signal left behind
/// (atexit does not run then) are removed once their process is gone.
enum PrivateFolder {
    /// A new folder in `base`, or why none could be made.
    static func make(in base: String) -> Result<String, SystemError> {
        removeLeftovers(in: base)
        var lastError = SystemError(call: "mkdir \(base)/bobao-…", errno: EEXIST)
        for _ in 0..<8 {
            let folder = base + "/bobao-\(getpid())-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
            // mkdir fails on anything already there, so an existing folder (or link) is never used.
            guard mkdir(folder, 0o700) == 0 else {
                lastError = SystemError(call: "mkdir \(folder)", errno: errno)
                if errno == EEXIST { continue }
                break
            }
            let first = created.withLock { folders in
                folders.append(folder)
                return folders.count == 1
            }
            if first { atexit { PrivateFolder.removeAll() } }
            return .success(folder)
        }
        return .failure(lastError)
    }

    private static let created = Mutex<[String]>([])

    private static func removeAll() {
        for folder in created.withLock({ $0 }) { remove(folder) }
    }

    private static func remove(_ folder: String) {
        for name in FileSystem.contentsOfDirectory(folder) ?? [] { FileSystem.remove(folder + "/" + name) }
        rmdir(folder)
    }

    /// `bobao-PID-HEX` folders of this user in `base` whose process no longer runs.
    private static func removeLeftovers(in base: String) {
        for entry in FileSystem.contentsOfDirectory(base) ?? [] where entry.hasPrefix("bobao-") {
            let parts = entry.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, let pid = pid_t(parts[1]), pid > 0, UInt32(parts[2], radix: 16) != nil,
                  kill(pid, 0) != 0, errno == ESRCH else { continue }
            var info = stat()
            let path = base + "/" + entry
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid() else { continue }
            remove(path)
        }
    }
}
