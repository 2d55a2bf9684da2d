import BobaoPlatform
#if FUZZING
import CFuzzer
import Glibc
#endif

/// Built with -sanitize=fuzzer (scripts/fuzz.sh), this hands control to libFuzzer. Built plainly, it
/// replays the files named on the command line, so the seed corpus runs as a regression check.
@main
struct Replay {
    static func main() throws {
        #if FUZZING
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzNormalizer(data!, size) })
        #else
        for path in CommandLine.arguments.dropFirst() {
            let bytes = try FileSystem.read(path)
            _ = bytes.withUnsafeBufferPointer { fuzzNormalizer($0.baseAddress ?? UnsafePointer(bitPattern: 1)!, $0.count) }
        }
        #endif
    }
}
