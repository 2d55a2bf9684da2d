import BobaoPlatform
#if FUZZING
import CFuzzer
import Glibc
#endif

/// A fuzz target's entry point. Built with -sanitize=fuzzer (scripts/fuzz.sh) it hands control to
/// libFuzzer; built plainly it replays the files named on the command line, so the seed corpus runs as a
/// regression check.
public func runFuzzTarget(_ target: @escaping @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) throws {
    #if FUZZING
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, target))
    #else
    for path in CommandLine.arguments.dropFirst() {
        let bytes = try FileSystem.read(path)
        _ = bytes.withUnsafeBufferPointer { target($0.baseAddress ?? UnsafePointer(bitPattern: 1)!, $0.count) }
    }
    #endif
}
