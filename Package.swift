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
        // libpulse.pc asks for -D_REENTRANT and -pthread, which SwiftPM refuses with a warning on every
        // build; its headers are on the default include path and the module map links libpulse, so the
        // target names no pkg-config file. The apt provider still tells SwiftPM where it comes from.
        .systemLibrary(
            name: "CPulse",
            providers: [.apt(["libpulse-dev"])]
        ),

        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        /// cJSON, which reads the protocol's JSON lines.
        .systemLibrary(
            name: "CJSON",
            pkgConfig: "libcjson",
            providers: [.apt(["libcjson-dev"])]
        ),
        /// sd_notify and sd_watchdog_enabled, for `Type=notify` units and their watchdog.
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        /// libmosquitto, the MQTT client (`--mqtt`): its header, and the library opened only when `--mqtt` asks
        /// for it (see mosquitto_loader.c).
        .target(name: "CMosquitto"),
        /// libmicrohttpd, the HTTP server (`--http`): its header, plain calls for its variadic set-up, and the
        /// library opened only when `--http` asks for it (see http_daemon.c).
        .target(name: "CMicroHTTPD"),
        /// epoll and eventfd, which the Glibc module does not export (headers only, nothing to link).
        .systemLibrary(name: "CLinux"),

        // MARK: Bobao's own modules.
        /// Pure logic with no I/O: WAV encoding, line framing, JSON requests, the announcement queue, replies.
        .target(name: "BobaoCore", dependencies: ["CJSON"]),
        /// Threads and standard streams without Foundation (which would bring ICU into the server's memory).
        .target(name: "BobaoPlatform", dependencies: ["CPlatformSupport"]),
        /// The GNU thread-naming call, compiled in C with _GNU_SOURCE kept to itself.
        .target(name: "CPlatformSupport"),
        /// eSpeak NG in process: the engine thread, the synthesizer, voice lookup.
        .target(name: "BobaoSpeech", dependencies: ["BobaoCore", "BobaoPlatform", "CEspeakNG", "CNoAudioDevice"]),
        /// Keeps eSpeak NG from opening an audio device of its own (see no_audio_device.c): every program that
        /// links BobaoSpeech exports this definition, which the dynamic linker then binds libespeak-ng to.
        .target(
            name: "CNoAudioDevice",
            linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic-symbol=create_audio_device_object"])]),
        /// The PulseAudio keep-alive player.
        .target(name: "BobaoAudio", dependencies: ["BobaoCore", "CPulse"]),
        /// The TCP listener and the announcement pipeline.
        .target(
            name: "BobaoServer",
            dependencies: [
                "BobaoCore", "BobaoPlatform", "BobaoSpeech", "BobaoAudio", "CLinux", "CSQLite", "CSystemd", "CMicroHTTPD",
                "CMosquitto",
            ]),
        .executableTarget(
            name: "bobao", dependencies: ["BobaoCore", "BobaoPlatform", "BobaoSpeech", "BobaoAudio", "BobaoServer"]),

        // MARK: Fuzzing (scripts/fuzz.sh builds these with -sanitize=fuzzer; a plain build replays files).
        .systemLibrary(name: "CFuzzer"),
        .target(name: "BobaoFuzzDriver", dependencies: ["BobaoPlatform", "CFuzzer"]),
        .executableTarget(name: "FuzzLineProtocol", dependencies: ["BobaoCore", "BobaoFuzzDriver"]),
        .executableTarget(name: "FuzzNormalizer", dependencies: ["BobaoCore", "BobaoFuzzDriver"]),
        .executableTarget(name: "FuzzHTTPRequest", dependencies: ["BobaoCore", "BobaoFuzzDriver"]),

        // MARK: Tests.
        /// Helpers the integration tests share: a private PulseAudio, monitor recording, loudness.
        .target(name: "BobaoTestSupport", dependencies: ["BobaoCore", "CTestSupport"]),
        .target(name: "CTestSupport"),
        .testTarget(name: "BobaoCoreTests", dependencies: ["BobaoCore", "BobaoServer", "BobaoTestSupport"]),
        .testTarget(
            name: "BobaoSpeechTests", dependencies: ["BobaoSpeech", "BobaoCore", "BobaoTestSupport", "CNoAudioDevice"]),
        .testTarget(
            name: "BobaoIntegrationTests",
            dependencies: ["BobaoCore", "BobaoSpeech", "BobaoAudio", "BobaoServer", "BobaoTestSupport", "bobao"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
