// swift-tools-version:6.0
// MediaKit: a media SDK for Linux. Swift core, native containers, codec plugins
// loaded at run time through a small versioned C ABI (Include/mediakit/mediakit_plugin.h).
import PackageDescription

let package = Package(
    name: "MediaKit",
    products: [
        .library(name: "MediaKit", targets: ["MediaKit"]),
        // The C ABI: libmediakit.so, exporting only the mk_ functions of Include/mediakit/mediakit.h.
        .library(name: "mediakit", type: .dynamic, targets: ["MediaKitC"]),
        // The plugin ABI header (Include/mediakit/mediakit_plugin.h) as a module, for plugins
        // written in Swift or built by SwiftPM outside this package (docs/writing-a-plugin.md).
        .library(name: "MediaKitPluginABI", targets: ["MediaKitPluginABI"]),
        // Codec plugins: one dynamic library each, found by MediaRegistry at run time.
        .library(name: "MediaKitPluginFFmpeg", type: .dynamic, targets: ["MediaKitPluginFFmpeg"]),
        .library(name: "MediaKitPluginDav1d", type: .dynamic, targets: ["MediaKitPluginDav1d"]),
        .library(name: "MediaKitPluginOpus", type: .dynamic, targets: ["MediaKitPluginOpus"]),
        .library(name: "MediaKitPluginVorbis", type: .dynamic, targets: ["MediaKitPluginVorbis"]),
        .library(name: "MediaKitPluginSwiftAudio", type: .dynamic, targets: ["MediaKitPluginSwiftAudio"]),
        .executable(name: "mk-probe", targets: ["MKProbe"]),
        .executable(name: "mk-decode", targets: ["MKDecode"]),
        .executable(name: "mk-remux", targets: ["MKRemux"]),
        .executable(name: "mk-audioconv", targets: ["MKAudioConv"]),
        .executable(name: "mk-stream", targets: ["MKStream"]),
        .executable(name: "mk-transcode", targets: ["MKTranscode"]),
        .executable(name: "mk-tag", targets: ["MKTag"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // The plugin ABI header, exposed as a module (types and constants; nothing to link).
        .target(name: "MediaKitPluginABI", path: "Sources/MediaKitPluginABI"),
        // The ABI for the host, with the host's own C helpers.
        .target(name: "CMediaKitPlugin", dependencies: ["MediaKitPluginABI"], path: "Sources/CMediaKitPlugin"),
        // The resampler's inner loops for x86-64 with AVX2 and FMA, in C with a per-function target
        // attribute (no unsafe flag, so a package can depend on MediaKit by version); MediaKit calls
        // them only on processors that have both (see Audio/Resampler.swift).
        .target(name: "MediaKitSIMD", path: "Sources/MediaKitSIMD"),
        .target(
            name: "MediaKit",
            dependencies: ["CMediaKitPlugin", "MediaKitSIMD"],
            path: "Sources/MediaKit",
            linkerSettings: [.linkedLibrary("dl")]
        ),

        // The C API: header types for the Swift implementation, and mk_last_error in C.
        .target(name: "CMediaKit", path: "Sources/CMediaKit"),
        .target(
            name: "MediaKitC",
            dependencies: ["MediaKit", "CMediaKit"],
            path: "Sources/MediaKitC",
            exclude: ["exports.map"],
            linkerSettings: [.unsafeFlags(["-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/MediaKitC/exports.map"])]
        ),

        // libavcodec (decoders), libavformat (the fallback demuxer) and libswscale (pixel format
        // conversion), through pkg-config. Only this plugin links them: the core links no FFmpeg library.
        .systemLibrary(
            name: "CFFmpeg",
            path: "Plugins/FFmpeg/CFFmpeg",
            pkgConfig: "libavcodec",
            providers: [.apt(["libavcodec-dev", "libavformat-dev", "libavutil-dev", "libswscale-dev"])]
        ),
        .target(
            name: "MediaKitPluginFFmpeg",
            dependencies: ["CFFmpeg"],
            path: "Plugins/FFmpeg/Sources",
            cSettings: [.headerSearchPath("../../../Include")],
            linkerSettings: [.linkedLibrary("avformat"), .linkedLibrary("avutil"), .linkedLibrary("swscale")]
        ),

        // Dedicated decoders (priority 200, above FFmpeg's 100 for the same codec).
        // Each C target links its library explicitly, so the plugin needs nothing
        // from the host at run time but the ABI header it was built against.
        .systemLibrary(
            name: "CDav1d",
            path: "Plugins/Dav1d/CDav1d",
            pkgConfig: "dav1d",
            providers: [.apt(["libdav1d-dev"])]
        ),
        .target(
            name: "MediaKitPluginDav1d",
            dependencies: ["CDav1d"],
            path: "Plugins/Dav1d/Sources",
            cSettings: [.headerSearchPath("../../../Include")],
            linkerSettings: [.linkedLibrary("dav1d")]
        ),
        .systemLibrary(
            name: "COpus",
            path: "Plugins/Opus/COpus",
            pkgConfig: "opus",
            providers: [.apt(["libopus-dev"])]
        ),
        .target(
            name: "MediaKitPluginOpus",
            dependencies: ["COpus"],
            path: "Plugins/Opus/Sources",
            cSettings: [.headerSearchPath("../../../Include")],
            linkerSettings: [.linkedLibrary("opus")]
        ),
        .systemLibrary(
            name: "CVorbis",
            path: "Plugins/Vorbis/CVorbis",
            pkgConfig: "vorbis",
            providers: [.apt(["libvorbis-dev"])]
        ),
        .target(
            name: "MediaKitPluginVorbis",
            dependencies: ["CVorbis"],
            path: "Plugins/Vorbis/Sources",
            cSettings: [.headerSearchPath("../../../Include")],
            linkerSettings: [.linkedLibrary("vorbis"), .linkedLibrary("vorbisenc"), .linkedLibrary("ogg")]
        ),

        // A plugin written in Swift: G.711 A-law / mu-law and IMA ADPCM (QuickTime and WAV),
        // needing no library (priority 200, above FFmpeg's). Exports mediakit_plugin_entry only.
        .target(
            name: "MediaKitPluginSwiftAudio",
            dependencies: ["MediaKitPluginABI"],
            path: "Plugins/SwiftAudio/Sources",
            exclude: ["exports.map"],
            linkerSettings: [.unsafeFlags(["-Xlinker", "--version-script=\(Context.packageDirectory)/Plugins/SwiftAudio/Sources/exports.map"])]
        ),

        .executableTarget(
            name: "MKProbe",
            dependencies: ["MediaKit", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Samples/probe"
        ),
        .executableTarget(
            name: "MKDecode",
            dependencies: ["MediaKit", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Samples/decode"
        ),
        .executableTarget(
            name: "MKRemux",
            dependencies: ["MediaKit", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Samples/remux"
        ),
        .executableTarget(
            name: "MKAudioConv",
            dependencies: ["MediaKit", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Samples/audioconv"
        ),
        .executableTarget(
            name: "MKStream",
            dependencies: ["MediaKit", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Samples/stream"
        ),
        .executableTarget(
            name: "MKTranscode",
            dependencies: ["MediaKit", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Samples/transcode"
        ),
        .executableTarget(
            name: "MKTag",
            dependencies: ["MediaKit", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Samples/tag"
        ),
        .testTarget(
            name: "MediaKitTests",
            dependencies: ["MediaKit"],
            path: "Tests/MediaKitTests"
        ),
    ]
)
