// swift-tools-version:6.0
// MediaKit: a media SDK for Linux. Swift core, native containers, codec plugins
// loaded at run time through a small versioned C ABI (Include/mediakit/mediakit_plugin.h).
import PackageDescription

let package = Package(
    name: "MediaKit",
    products: [
        .library(name: "MediaKit", targets: ["MediaKit"]),
        // Codec plugins: one dynamic library each, found by MediaRegistry at run time.
        .library(name: "MediaKitPluginFFmpeg", type: .dynamic, targets: ["MediaKitPluginFFmpeg"]),
        .executable(name: "mk-probe", targets: ["MKProbe"]),
        .executable(name: "mk-decode", targets: ["MKDecode"]),
        .executable(name: "mk-remux", targets: ["MKRemux"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // The plugin ABI header, exposed to Swift as a module.
        .target(name: "CMediaKitPlugin", path: "Sources/CMediaKitPlugin"),
        .target(
            name: "MediaKit",
            dependencies: ["CMediaKitPlugin"],
            path: "Sources/MediaKit",
            linkerSettings: [.linkedLibrary("dl")]
        ),

        // libavcodec, through pkg-config.
        .systemLibrary(
            name: "CFFmpeg",
            path: "Plugins/FFmpeg/CFFmpeg",
            pkgConfig: "libavcodec",
            providers: [.apt(["libavcodec-dev", "libavutil-dev"])]
        ),
        .target(
            name: "MediaKitPluginFFmpeg",
            dependencies: ["CFFmpeg"],
            path: "Plugins/FFmpeg/Sources",
            cSettings: [.headerSearchPath("../../../Include"), .unsafeFlags(["-O2"])],
            linkerSettings: [.linkedLibrary("avutil")]
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
        .testTarget(
            name: "MediaKitTests",
            dependencies: ["MediaKit"],
            path: "Tests/MediaKitTests"
        ),
    ]
)
