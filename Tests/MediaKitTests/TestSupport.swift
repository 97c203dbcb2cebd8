import Foundation
import MediaKit
import XCTest

/// Where the shared corpus of real media files lives (`../shared/media` beside the checkout).
enum SharedMedia {
    static let directory: URL = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/media")
    }()

    /// One corpus file by name, or a skip when a user's clone does not have it (a thrown
    /// failure under CI=true, where ../shared/media must be complete).
    static func file(_ name: String) throws -> URL {
        let url = directory.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: url.path) else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                throw MediaError(.notFound, "../shared/media lacks a file this test reads (CI=true: a failure)", path: url.path)
            }
            throw XCTSkip("\(url.path) missing: this test reads ../shared/media, which this clone does not have")
        }
        return url
    }

    /// The corpus files, or a skip when a user's clone has no ../shared (a failure under CI=true).
    /// - Parameter folder: a subfolder of ../shared/media (`breadth`), or nil for its top level.
    static func files(extensions: Set<String>, in folder: String? = nil) throws -> [URL] {
        let directory = folder.map { Self.directory.appendingPathComponent($0) } ?? Self.directory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                XCTFail("../shared/media is missing under CI: \(directory.path)")
                return []
            }
            throw XCTSkip("these tests read real files from ../shared/media, which this clone does not have (\(directory.path))")
        }
        return names.sorted().filter { extensions.contains(($0 as NSString).pathExtension.lowercased()) }
            .map { directory.appendingPathComponent($0) }
    }
}

/// A small deterministic random generator (SplitMix64), so corruption tests repeat exactly.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Pictures made in memory for the picture tests, and their samples read back.
enum TestPictures {
    /// A picture whose every sample is distinct: value = plane * 4096 + row * 64 + column
    /// (truncated to the sample size), rows padded by `padding` bytes (0: tightly packed).
    static func make(_ format: PixelFormat, width: Int, height: Int, padding: Int = 16, colorRange: ColorRange = .unspecified) -> Frame {
        var frame = Frame(mediaType: .video, pts: 7, duration: 1, timeBase: Rational(1, 25), pixelFormat: format,
                          width: width, height: height, colorRange: colorRange, planes: [], storage: FrameStorage {})
        var buffers: [UnsafeMutableRawPointer] = []
        for i in 0..<format.planeCount {
            let size = frame.planeSize(i)
            let stride = size.width * format.bytesPerComponent + padding
            let p = UnsafeMutableRawPointer.allocate(byteCount: max(1, stride * size.height), alignment: 16)
            for y in 0..<size.height {
                for x in 0..<size.width {
                    let v = i * 4096 + y * 64 + x
                    if format.bytesPerComponent == 1 {
                        p.storeBytes(of: UInt8(truncatingIfNeeded: v), toByteOffset: y * stride + x, as: UInt8.self)
                    } else {
                        p.storeBytes(of: UInt16(truncatingIfNeeded: v), toByteOffset: y * stride + 2 * x, as: UInt16.self)
                    }
                }
            }
            buffers.append(p)
            frame.planes.append(Plane(base: UnsafeRawPointer(p), stride: stride, length: stride * size.height))
        }
        nonisolated(unsafe) let owned = buffers
        frame.storage = FrameStorage { owned.forEach { $0.deallocate() } }
        return frame
    }

    /// The samples of plane `i` as rows of values (a chroma pair of NV12 counts as two).
    static func samples(_ f: Frame, _ i: Int) -> [[Int]] {
        let size = f.planeSize(i), b = f.pixelFormat!.bytesPerComponent
        return f.withPlane(i) { raw in
            (0..<size.height).map { y in
                (0..<size.width).map { x in
                    b == 1 ? Int(raw[y * f.planes[i].stride + x])
                        : Int(raw.load(fromByteOffset: y * f.planes[i].stride + 2 * x, as: UInt16.self))
                }
            }
        }
    }
}

/// FNV-1a (64-bit) over the bytes of decoded frames: what the decode tests compare frames by.
///
/// The loop walks a raw pointer. Iterating a `Slice` of an `UnsafeRawBufferPointer` instead
/// goes through a `_read` coroutine per byte in a debug build, whose frame AddressSanitizer
/// allocates with a stack trace: that made the asynchronous-decode tests most of
/// `make sanitize`'s time.
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    /// Adds `count` bytes starting at `offset` of `bytes` (as many as there are, when fewer).
    mutating func add(_ bytes: UnsafeRawBufferPointer, offset: Int = 0, count: Int) {
        guard let base = bytes.baseAddress, offset < bytes.count else { return }
        var p = base.assumingMemoryBound(to: UInt8.self) + offset
        let end = p + min(count, bytes.count - offset)
        var h = value
        while p < end {
            h = (h ^ UInt64(p.pointee)) &* 0x100_0000_01b3
            p += 1
        }
        value = h
    }

    /// Adds what a frame presents: the visible bytes of each row of a picture's planes (not the
    /// padding past its width), the samples of an audio frame's planes (not the padding a plugin
    /// may leave after them).
    mutating func add(presentedBytesOf f: Frame) {
        for i in f.planes.indices {
            f.withPlane(i) { bytes in
                if f.mediaType == .video {
                    let size = f.planeSize(i), stride = f.planes[i].stride
                    let rowBytes = size.width * (f.pixelFormat?.bytesPerComponent ?? 1)
                    for y in 0..<size.height { add(bytes, offset: y * stride, count: rowBytes) }
                } else {
                    let audioBytes = f.sampleFormat.map { f.sampleCount * $0.bytesPerSample * ($0.isPlanar ? 1 : f.channels) } ?? 0
                    add(bytes, count: audioBytes)
                }
            }
        }
    }
}
