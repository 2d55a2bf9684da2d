#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: what was attempted (the call, often with the path or address it was about) and
/// errno. The one error type of every POSIX wrapper in Bobao.
public struct SystemError: Error, CustomStringConvertible, Equatable {
    public var call: String
    public var errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// System calls behind one namespace: `EINTR` is retried, `EAGAIN` comes back as nil, other failures throw.
public enum Posix {
    @discardableResult
    public static func call(_ name: @autoclosure () -> String, _ body: () -> Int32) throws(SystemError) -> Int32 {
        while true {
            let result = body()
            if result >= 0 { return result }
            if errno == EINTR { continue }
            throw SystemError(call: name(), errno: errno)
        }
    }

    /// For calls that may block: nil when the descriptor is not ready (`EAGAIN`).
    public static func nonBlocking(_ name: @autoclosure () -> String, _ body: () -> Int) throws(SystemError) -> Int? {
        while true {
            let result = body()
            if result >= 0 { return result }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
            throw SystemError(call: name(), errno: errno)
        }
    }

    /// The process's soft and hard limits on open descriptors.
    public static func descriptorLimit() -> (soft: Int, hard: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (1024, 1024) }
        func clamp(_ value: rlim_t) -> Int { value >= rlim_t(Int.max) ? Int.max : Int(value) }
        return (clamp(limit.rlim_cur), clamp(limit.rlim_max))
    }

    /// Raises the soft limit on descriptors to the hard limit (for thousands of clients). A process-wide
    /// change, so only `bobao serve`'s start-up calls it, and says so. Returns the new soft limit.
    @discardableResult
    public static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return descriptorLimit().soft }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return descriptorLimit().soft
    }
}

/// An open descriptor with exactly one owner, which closes it: set-up that fails half-way leaks nothing,
/// and nothing closes a descriptor twice.
public struct FileDescriptor: ~Copyable, Sendable {
    public let rawValue: Int32

    /// Takes ownership of `rawValue` (which must be open).
    public init(taking rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Runs `open` (a call returning a new descriptor or -1) and owns what it returns.
    public init(_ name: @autoclosure () -> String, _ open: () -> Int32) throws(SystemError) {
        rawValue = try Posix.call(name(), open)
    }

    deinit { close(rawValue) }
}
