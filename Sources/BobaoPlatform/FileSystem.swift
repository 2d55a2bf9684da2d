#if canImport(Glibc)
import Glibc
#endif

/// The few file operations Bobao needs, straight on POSIX (see `startThread` for why not Foundation).
public enum FileSystem {
    /// A failed call on a path: the path and errno (the one POSIX error type, named here for its uses).
    public typealias Failure = SystemError

    /// The `S_IFMT` bits of `path` (following symbolic links), or nil if it does not exist.
    public static func type(of path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & S_IFMT
    }

    public static func isDirectory(_ path: String) -> Bool { type(of: path) == S_IFDIR }
    public static func isRegularFile(_ path: String) -> Bool { type(of: path) == S_IFREG }
    public static func exists(_ path: String) -> Bool { type(of: path) != nil }

    /// Names in a folder, without `.` and `..`; nil if it cannot be read.
    public static func contentsOfDirectory(_ path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The absolute path with symbolic links resolved, or nil if it does not exist.
    public static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `path` without its last component (`/a/b/c` → `/a/b`, `/a` → `/`).
    public static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }

    /// Reads a whole file.
    public static func read(_ path: String) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(call: path, errno: errno) }
        defer { close(fd) }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(call: path, errno: errno)
            }
            if count == 0 { return data }
            data += chunk[..<count]
        }
    }

    /// Creates or truncates `path` and writes `bytes` to it.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(Failure) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure(call: path, errno: errno) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                let failure = Failure(call: path, errno: errno)
                close(fd)
                throw failure
            }
            offset += written
        }
        guard close(fd) == 0 else { throw Failure(call: path, errno: errno) }
    }

    public static func remove(_ path: String) { unlink(path) }

    /// The value of an environment variable.
    public static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The whole environment.
    public static func environment() -> [String: String] {
        var result: [String: String] = [:]
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            cursor += 1
        }
        return result
    }
}
