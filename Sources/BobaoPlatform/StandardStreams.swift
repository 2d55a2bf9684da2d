#if canImport(Glibc)
import Glibc
#endif

/// Writes to the standard streams with write(2), whole, unbuffered: a log line or a reply reaches its
/// reader at once, also when stdout is a pipe.
public enum StandardStreams {
    public static func writeError(_ text: String) { writeAll(2, text) }
    public static func writeOutput(_ text: String) { writeAll(1, text) }

    static func writeAll(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return  // nowhere left to report to
            }
            offset += written
        }
        bytes.removeAll()
    }

    /// All of standard input.
    public static func readInput() -> [UInt8] {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return data }
            data += chunk[..<count]
        }
    }
}
