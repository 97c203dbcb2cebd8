// swift-tools-version:6.0
// libFuzzer targets for MediaKit's parsers (issue 17), apart from the main package so that
// `swift build` and `make test` never build them. Built and run by `make fuzz` (Tests/fuzz/run.sh)
// with `--sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address`, which instruments MediaKit itself too.
//
// Adding a target: one line in FuzzHarness.targets (Tests/MediaKitTests/FuzzHarness.swift, linked here
// as FuzzHarness) and a folder Sources/fuzz_<name> with a copy of the 8-line entry point naming it.
import Foundation
import PackageDescription

/// Targets with their own entry point (the C API), linked to libmediakit instead of FuzzHarness.
let capiTargets = ["capi"]
/// Every other Sources/fuzz_<name> folder: a target that calls FuzzHarness.targets["<name>"] (`_` as `-`).
let harnessTargets = ((try? FileManager.default.contentsOfDirectory(atPath: Context.packageDirectory + "/Sources")) ?? [])
    .filter { $0.hasPrefix("fuzz_") }.map { String($0.dropFirst(5)) }.filter { !capiTargets.contains($0) }.sorted()

/// The main package is `../..`; SwiftPM names a path dependency after its folder.
let root = "../.."
let rootIdentity = String(Context.packageDirectory.split(separator: "/").dropLast(2).last ?? "MediaKit")

let mediaKit: Target.Dependency = .product(name: "MediaKit", package: rootIdentity)
let cAPI: Target.Dependency = .product(name: "mediakit", package: rootIdentity)
/// The FFmpeg plugin, built beside the targets (sanitized too) for the "lavf" target, which reads
/// through its libavformat demuxers (the registry finds it next to the executable).
let ffmpegPlugin: Target.Dependency = .product(name: "MediaKitPluginFFmpeg", package: rootIdentity)

var targets: [Target] = [
    .target(name: "FuzzHarness", dependencies: [mediaKit]),
    // mediakit.h as a module, for the C API target.
    .target(name: "CMediaKitAPI"),
]
var products: [Product] = []
for name in harnessTargets + capiTargets {
    let module = "fuzz_" + name
    let deps: [Target.Dependency] = capiTargets.contains(name) ? ["CMediaKitAPI", cAPI] : name == "lavf" ? ["FuzzHarness", ffmpegPlugin] : ["FuzzHarness"]
    targets.append(.executableTarget(name: module, dependencies: deps))
    products.append(.executable(name: "fuzz-" + String(name.map { $0 == "_" ? "-" : $0 }), targets: [module]))
}

let package = Package(
    name: "MediaKitFuzz",
    products: products,
    dependencies: [.package(path: root)],
    targets: targets
)
