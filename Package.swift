// swift-tools-version:6.0
import PackageDescription

/// How the programs are linked (docs/performance.md, "What reeld's own program costs"): with the
/// toolchain's lld, relative relocations packed (DT_RELR, glibc 2.36 and later: Debian 12): the
/// dynamic loader reads ~20 KB at start instead of 2.5 MB of `.rela.dyn`; and no symbol table
/// for the dynamic loader beyond what the shared libraries need (the static Swift runtime's
/// link arguments export every symbol, ~22,000 names the loader then hashes into).
let programLinking: [LinkerSetting] = [
    .unsafeFlags([
        "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic",
    ])
]

/// reeld's link only: `.rodata` stays read-only (Sources/reeld/read-only-data.ld says why), so
/// the pages of it that starting read are handed back like the code's.
let daemonLinking: [LinkerSetting] = programLinking + [
    .unsafeFlags(["-Xlinker", "-T", "-Xlinker", Context.packageDirectory + "/Sources/reeld/read-only-data.ld"])
]

let package = Package(
    name: "Reel",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "reeld", targets: ["reeld"]),
        .executable(name: "reel", targets: ["reel"]),
        .executable(name: "reel-snapcast", targets: ["reel-snapcast"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // C libraries: each is imported by exactly one Swift module.
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CMPG123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
        .systemLibrary(name: "CVorbis", pkgConfig: "vorbisenc", providers: [.apt(["libvorbis-dev"])]),
        // libFLAC's encoder, for the recorder's FLAC takes (libsndfile, which maps it anyway,
        // always has it compute an MD5).
        .systemLibrary(name: "CFLAC", pkgConfig: "flac", providers: [.apt(["libflac-dev"])]),
        // dlopen and dlsym for the libraries loaded when first needed, with errors that name them.
        .target(name: "CDynamicLibrary", linkerSettings: [.linkedLibrary("dl")]),
        // libsoxr (<soxr.h> from Debian's libsoxr-dev), loaded with dlopen by the first resampler
        // made rather than linked: a daemon that never resamples does not map it (nor libgomp).
        .target(name: "CSoxr", dependencies: ["CDynamicLibrary"]),
        // FFmpeg's decoders (<libavformat/…> from Debian's libavformat-dev and libavcodec-dev),
        // loaded with dlopen by the first file that needs them rather than linked: a daemon that
        // never plays such a file maps none of FFmpeg.
        .target(name: "CFFmpeg", dependencies: ["CDynamicLibrary"], linkerSettings: [.linkedLibrary("m")]),
        // libebur128 (<ebur128.h> from Debian's libebur128-dev), loaded with dlopen by the first
        // take measured rather than linked: a daemon that never records does not map it.
        .target(name: "CEBUR128", dependencies: ["CDynamicLibrary"]),
        // libcurl (<curl/curl.h> from Debian's libcurl4-openssl-dev), loaded with dlopen by the
        // first URL played rather than linked: a daemon that never plays a stream maps none of it.
        .target(name: "CCurl", dependencies: ["CDynamicLibrary"]),
        // epoll and eventfd from the C library, for the control socket's event loop.
        .systemLibrary(name: "CEpoll"),
        // timerfd from the C library, for the schedules' timer on the wall clock.
        .systemLibrary(name: "CTimerFD"),
        // TagLib's C++ API behind a C header (TagLib 1.13's own C API has no album artist, disc
        // or pictures); includes <taglib/…>, links libtag (Debian's libtag1-dev).
        .target(name: "CTagLib", linkerSettings: [.linkedLibrary("tag")]),

        .target(name: "ReelModel", linkerSettings: [.linkedLibrary("m")]),
        .target(name: "ReelProtocol", dependencies: ["ReelModel"]),
        // The formats radio stations send (ICY metadata, station playlists, HLS): pure Swift,
        // no I/O and no dependency, so scripts/fuzz-stream-formats compiles it on its own.
        .target(name: "ReelStreamFormats"),
        // A blocking or polled JSON-RPC connection to reeld's socket, for the CLI and the plugin.
        .target(name: "ReelClient", dependencies: ["ReelProtocol"]),
        // What every thread-owning module shares: the one lock type, the monotonic clock, named
        // threads of our own.
        .target(name: "ReelRuntime"),
        .target(
            name: "ReelAudio",
            dependencies: [
                "ReelModel", "ReelRuntime", "ReelStreamFormats", "CALSA", "CSndFile", "CFLAC", "CMPG123", "CVorbis", "CSoxr", "CFFmpeg", "CEBUR128", "CCurl",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Tags, stream properties and embedded pictures of the files of the music folders.
        .target(name: "ReelTags", dependencies: ["ReelModel", "CTagLib"]),
        .target(
            name: "ReelLibrary",
            dependencies: [
                "ReelModel", "ReelRuntime",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for reading many rows without GRDB's copy of each (MusicIndex).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The protocol-neutral core every front end drives: controllers, rules, change feeds.
        .target(
            name: "ReelCore",
            dependencies: [
                "ReelModel", "ReelProtocol", "ReelRuntime", "ReelAudio", "ReelLibrary", "ReelTags", "ReelStreamFormats", "CTimerFD",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "ReelDaemon",
            dependencies: [
                // Not ReelLibrary: front ends reach the library and the music index only
                // through the core's named operations (ReelCore), which return model values.
                "ReelModel", "ReelProtocol", "ReelRuntime", "ReelAudio", "ReelCore", "CEpoll",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The web page, built into the binary (`PackageResources.index_html`, …): nothing
            // to install beside it, nothing fetched at run time.
            resources: [
                .embedInCode("HTTP/Page/index.html"), .embedInCode("HTTP/Page/app.js"),
                .embedInCode("HTTP/Page/style.css"),
            ]),
        .executableTarget(
            name: "reeld",
            dependencies: [
                "ReelDaemon",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["read-only-data.ld"],
            linkerSettings: daemonLinking),
        .executableTarget(
            name: "reel",
            dependencies: [
                "ReelProtocol", "ReelModel", "ReelClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            linkerSettings: programLinking),
        // Snapcast's stream plugin: the bridge (ReelSnapcast) and its program, installed with reeld.
        .target(name: "ReelSnapcast", dependencies: ["ReelClient", "ReelProtocol", "ReelModel"]),
        .executableTarget(name: "reel-snapcast", dependencies: ["ReelSnapcast"], linkerSettings: programLinking),

        // Measures the daemon for bench/; not installed.
        .executableTarget(
            name: "reel-bench", dependencies: ["ReelProtocol", "ReelLibrary", "ReelRuntime", "ReelAudio", "ReelTags", "ReelModel"]),

        .testTarget(name: "ReelModelTests", dependencies: ["ReelModel"]),
        .testTarget(name: "ReelProtocolTests", dependencies: ["ReelProtocol", "ReelTestSupport"]),
        .testTarget(name: "ReelStreamFormatsTests", dependencies: ["ReelStreamFormats"]),
        .testTarget(name: "ReelSnapcastTests", dependencies: ["ReelSnapcast", "ReelClient", "ReelProtocol", "ReelModel"]),
        // The test servers (Tests/Streams/*.py as child processes) and waiting helpers that
        // several test targets share.
        .target(name: "ReelTestSupport", path: "Tests/ReelTestSupport"),
        .testTarget(name: "ReelAudioTests", dependencies: ["ReelAudio", "ReelRuntime", "ReelTestSupport"]),
        .testTarget(name: "ReelTagsTests", dependencies: ["ReelTags", "ReelModel", "ReelTestSupport"]),
        .testTarget(name: "ReelLibraryTests", dependencies: ["ReelLibrary", "ReelTestSupport"]),
        .testTarget(name: "ReelCoreTests", dependencies: ["ReelCore", "ReelRuntime", "ReelAudio", "ReelLibrary", "ReelModel", "ReelTestSupport"]),
        .testTarget(
            name: "ReelDaemonTests",
            dependencies: [
                "ReelDaemon", "ReelCore", "ReelRuntime", "ReelAudio", "ReelProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
        // Runs the built binaries; uses ReelLibrary only to lay out large trees before a start.
        .testTarget(name: "EndToEndTests", dependencies: ["ReelProtocol", "ReelLibrary", "ReelTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
