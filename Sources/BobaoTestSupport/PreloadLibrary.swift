import Foundation

/// Builds small `LD_PRELOAD` objects from C source at test time, with the toolchain's clang (found next
/// to `swift` on PATH) or else `cc`.
public enum PreloadLibrary {
    /// Compiles `code` into `lib<name>.so` in a folder of this test process and returns its path.
    public static func build(name: String, code: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-preload-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let source = folder + "/\(name).c", object = folder + "/lib\(name).so"
        try Data(code.utf8).write(to: URL(fileURLWithPath: source))
        guard let compiler = compiler() else { throw ProgramError.notFound("clang or cc") }
        let result = try runProgram(compiler, ["-shared", "-fPIC", "-O2", "-o", object, source, "-ldl"])
        guard result.status == 0 else { throw ProgramError.failed(compiler, result) }
        return object
    }

    /// The toolchain's clang (next to `swift` on PATH), else `cc`.
    private static func compiler() -> String? {
        if let swift = findProgram("swift") {
            let folder = URL(fileURLWithPath: swift).resolvingSymlinksInPath().deletingLastPathComponent()
            let clang = folder.appendingPathComponent("clang").path
            if FileManager.default.isExecutableFile(atPath: clang) { return clang }
        }
        return findProgram("clang") ?? findProgram("cc")
    }
}

/// An `LD_PRELOAD` object that sets the wall clock (`CLOCK_REALTIME`, `gettimeofday`, `time`) ahead by
/// `BOBAO_WALL_CLOCK_OFFSET` seconds and leaves the monotonic and boot clocks alone: a clock set by NTP,
/// not time passing.
///
/// Debian's libfaketime (0.9.10) would do, but preloaded straight into `bobao` (as `ServerProcess` must,
/// since it always runs the binary itself) the program sees no arguments and prints its usage; it only
/// works behind libfaketime's own `faketime` wrapper.
public enum WallClockShift {
    /// The environment that runs a child with the wall clock `seconds` ahead.
    public static func environment(seconds: Int) throws -> [String: String] {
        ["LD_PRELOAD": try built.get(), "BOBAO_WALL_CLOCK_OFFSET": String(seconds)]
    }

    private static let built = Result { try PreloadLibrary.build(name: "wallclockshift", code: code) }

    private static let code = #"""
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <stdlib.h>
        #include <sys/time.h>
        #include <time.h>

        static long offset(void) {
            const char *text = getenv("BOBAO_WALL_CLOCK_OFFSET");
            return text != NULL ? atol(text) : 0;
        }

        int clock_gettime(clockid_t clock, struct timespec *now) {
            static int (*real)(clockid_t, struct timespec *);
            if (real == NULL) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
            int status = real(clock, now);
            if (status == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) now->tv_sec += offset();
            return status;
        }

        int gettimeofday(struct timeval *restrict now, void *restrict zone) {
            struct timespec exact;
            int status = clock_gettime(CLOCK_REALTIME, &exact);
            if (status == 0 && now != NULL) { now->tv_sec = exact.tv_sec; now->tv_usec = exact.tv_nsec / 1000; }
            (void)zone;
            return status;
        }

        time_t time(time_t *out) {
            struct timespec exact;
            clock_gettime(CLOCK_REALTIME, &exact);
            if (out != NULL) *out = exact.tv_sec;
            return exact.tv_sec;
        }
        """#
}
