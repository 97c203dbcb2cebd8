import Foundation
import XCTest
@testable import MediaKit

/// Oracle: the plugin ABI contract in Include/mediakit/mediakit_plugin.h; test plugins
/// are compiled from C at test time with the system C compiler.
final class RegistryTests: XCTestCase {
    private func compilePlugin(abiVersion: String, name: String, sizeAndTail: String = "sizeof(mk_plugin_descriptor)", tail: String = "") throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-plugin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let include = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Include").path
        let source = dir.appendingPathComponent("p.c")
        try """
        #include "mediakit/mediakit_plugin.h"
        #include <stddef.h>
        static const mk_plugin_descriptor desc = { \(abiVersion), \(sizeAndTail), "\(name)", "0.1", "test plugin", 0, 0, {0}\(tail) };
        __attribute__((visibility("default"))) const mk_plugin_descriptor *mediakit_plugin_entry(void) { return &desc; }
        """.write(to: source, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("libMediaKitPluginTest.so").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["cc", "-shared", "-fPIC", "-I", include, source.path, "-o", out]
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "cc failed")
        return out
    }

    func testPluginBuiltForAnotherABIIsRefused() throws {
        let path = try compilePlugin(abiVersion: "99", name: "future")
        let registry = MediaRegistry()
        XCTAssertThrowsError(try registry.load(path: path)) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .pluginABI)
            XCTAssertTrue(e.message.contains("version 99"), e.message)
            XCTAssertTrue(e.message.contains("version 1"), e.message)
        }
        XCTAssertTrue(registry.plugins.isEmpty)
    }

    func testPluginWithCurrentABILoads() throws {
        let path = try compilePlugin(abiVersion: "MK_PLUGIN_ABI_VERSION", name: "empty")
        let registry = MediaRegistry()
        let plugin = try registry.load(path: path)
        XCTAssertEqual(plugin?.name, "empty")
        XCTAssertEqual(registry.plugins.map(\.path), [path])
    }

    func testNoDecoderNamesCodecAndEveryPlaceSearched() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("mk-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let registry = MediaRegistry()
        try registry.load(path: empty.path)
        XCTAssertThrowsError(try registry.makeDecoder(for: CodecParameters(mediaType: .video, codec: "h264"), timeBase: Rational(1, 25))) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .notFound)
            XCTAssertTrue(e.message.contains("no decoder for h264"), e.message)
            XCTAssertTrue(e.message.contains(empty.path), e.message)
        }
    }

    func testDescriptorWithoutConverterFieldsIsNotReadPastItsSize() throws {
        // A plugin built before picture converters existed: its struct_size ends at reserved[].
        // Whatever lies beyond must not be read (here: a bogus count and pointer).
        let path = try compilePlugin(abiVersion: "MK_PLUGIN_ABI_VERSION", name: "old",
                                     sizeAndTail: "offsetof(mk_plugin_descriptor, converter_count)",
                                     tail: ", 7, (const mk_plugin_converter *)8")
        let registry = MediaRegistry()
        XCTAssertEqual(try registry.load(path: path)?.name, "old")
        XCTAssertTrue(registry.converters.isEmpty)
    }

    func testMalformedConverterListIsRefused() throws {
        let path = try compilePlugin(abiVersion: "MK_PLUGIN_ABI_VERSION", name: "broken", tail: ", 1, 0")
        let registry = MediaRegistry()
        XCTAssertThrowsError(try registry.load(path: path)) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .pluginABI)
            XCTAssertTrue(e.message.contains("picture converters"), e.message)
        }
    }

    func testNoPictureConverterNamesTheConversionAndEveryPlaceSearched() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("mk-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let registry = MediaRegistry()
        try registry.load(path: empty.path)
        XCTAssertThrowsError(try registry.makePictureConverter(from: .yuv420p10, to: .nv12, width: 64, height: 32)) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .notFound)
            XCTAssertTrue(e.message.contains("no picture converter from yuv420p10le to nv12"), e.message)
            XCTAssertTrue(e.message.contains(empty.path), e.message)
        }
    }

    func testNotAPluginIsRefused() throws {
        let registry = MediaRegistry()
        XCTAssertThrowsError(try registry.load(path: "/usr/lib/x86_64-linux-gnu/libm.so.6")) { error in
            XCTAssertEqual((error as! MediaError).kind, .pluginABI)
        }
    }
}
