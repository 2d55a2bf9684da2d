import Foundation

/// The `bobao` executable that `swift build`/`swift test` built beside the test bundle.
public enum BobaoBinary {
    public static let path: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var folder = URL(fileURLWithPath: exe).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("bobao").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            folder.deleteLastPathComponent()
        }
        // `swift test` builds it next to the test bundle; keep a path that fails loudly otherwise.
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("bobao").path
    }()

    /// Runs `bobao ARGUMENTS` to completion.
    @discardableResult
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], input: Data? = nil
    ) throws -> ProgramResult {
        try runProgram(path, arguments, environment: environment, input: input)
    }
}
