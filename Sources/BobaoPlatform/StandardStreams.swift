#if canImport(Glibc)
import Glibc
#endif

/// Writes to the standard streams with write(2), whole, unbuffered: a log line or a reply reaches its
/// reader at once, also when stdout is a pipe.
public enum StandardStreams {
    public static func writeError(_ text: String) { writeAll(2, text) }
    public static func writeOutput(_ text: String) { writeAll(1, text) }
    static func writeAll(_ fd: Int32, _ text: String) { writeAll(fd, Array(text.utf8)) }

    /// Writes all of `bytes` to standard output; false (errno says why) when it could not.
    @discardableResult
    public static func writeOutput(bytes: [UInt8]) -> Bool { writeAll(1, bytes) }

    /// Whether standard input is a terminal (text would have to be typed).
    public static var inputIsTerminal: Bool { isatty(0) == 1 }

    @discardableResult
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return false  // nowhere left to report to
            }
            offset += written
        }
        return true
    }

    /// All of standard input, or its first `limit` bytes.
    public static func readInput(limit: Int = .max) -> [UInt8] {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while data.count < limit {
            let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, min($0.count, limit - data.count)) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return data }
            data += chunk[..<count]
        }
        return data
    }
}
