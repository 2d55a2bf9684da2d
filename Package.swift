// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Bobao",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "bobao", targets: ["bobao"]),
    ],
    targets: [
        // MARK: C libraries from Debian's packages, found through pkg-config.
        .systemLibrary(
            name: "CEspeakNG",
            pkgConfig: "espeak-ng",
            providers: [.apt(["libespeak-ng-dev"])]
        ),
        .systemLibrary(
            name: "CPulse",
            pkgConfig: "libpulse",
            providers: [.apt(["libpulse-dev"])]
        ),

        // MARK: Bobao's own modules.
        /// Pure logic with no I/O: WAV encoding, line framing, the announcement queue, replies.
        .target(name: "BobaoCore"),
        /// eSpeak NG in process: the engine thread, the synthesizer, voice lookup.
        .target(name: "BobaoSpeech", dependencies: ["BobaoCore", "CEspeakNG"]),
        /// The PulseAudio keep-alive player.
        .target(name: "BobaoAudio", dependencies: ["BobaoCore", "CPulse"]),
        /// The TCP listener and the announcement pipeline.
        .target(name: "BobaoServer", dependencies: ["BobaoCore", "BobaoSpeech", "BobaoAudio"]),
        .executableTarget(name: "bobao", dependencies: ["BobaoCore", "BobaoSpeech", "BobaoAudio", "BobaoServer"]),

        // MARK: Tests.
        /// Helpers the integration tests share: a private PulseAudio, monitor recording, loudness.
        .target(name: "BobaoTestSupport", dependencies: ["BobaoCore", "CTestSupport"]),
        .target(name: "CTestSupport"),
        .testTarget(name: "BobaoCoreTests", dependencies: ["BobaoCore", "BobaoTestSupport"]),
        .testTarget(name: "BobaoSpeechTests", dependencies: ["BobaoSpeech", "BobaoCore", "BobaoTestSupport"]),
        .testTarget(
            name: "BobaoIntegrationTests",
            dependencies: ["BobaoCore", "BobaoSpeech", "BobaoTestSupport", "bobao"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
