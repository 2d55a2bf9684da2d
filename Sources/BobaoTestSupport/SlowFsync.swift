import Foundation

/// An `LD_PRELOAD` object, built at test time, that makes `fsync` and `fdatasync` sleep for
/// `BOBAO_SLOW_FSYNC_MS` milliseconds before doing their work, and counts the calls: each call appends one
/// byte to `BOBAO_FSYNC_COUNT_FILE`, if set. It lets a test run `bobao serve` on a disk with slow fsync.
public enum SlowFsync {
    /// The environment that runs a child with every fsync taking `milliseconds`, counted in `countFile`.
    public static func environment(milliseconds: Int, countFile: String? = nil) throws -> [String: String] {
        var environment = ["LD_PRELOAD": try library(), "BOBAO_SLOW_FSYNC_MS": String(milliseconds)]
        if let countFile { environment["BOBAO_FSYNC_COUNT_FILE"] = countFile }
        return environment
    }

    /// How many fsync and fdatasync calls were counted in `countFile`.
    public static func calls(countedIn countFile: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: countFile))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// The path of the built shared object (built once per test process).
    public static func library() throws -> String {
        try built.get()
    }

    private static let built = Result { try PreloadLibrary.build(name: "slowfsync", code: code) }

    private static let code = #"""
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <errno.h>
        #include <fcntl.h>
        #include <stdlib.h>
        #include <time.h>
        #include <unistd.h>

        static void slow_down(void) {
            int saved = errno;
            const char *count_file = getenv("BOBAO_FSYNC_COUNT_FILE");
            if (count_file != NULL && count_file[0] != '\0') {
                int fd = open(count_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
                if (fd >= 0) { (void)write(fd, "s", 1); close(fd); }
            }
            const char *text = getenv("BOBAO_SLOW_FSYNC_MS");
            long ms = text != NULL ? atol(text) : 0;
            if (ms > 0) {
                struct timespec left = { ms / 1000, (ms % 1000) * 1000000L };
                while (nanosleep(&left, &left) != 0 && errno == EINTR) {}
            }
            errno = saved;
        }

        int fsync(int fd) {
            static int (*real)(int);
            if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
            slow_down();
            return real(fd);
        }

        int fdatasync(int fd) {
            static int (*real)(int);
            if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
            slow_down();
            return real(fd);
        }
        """#
}
