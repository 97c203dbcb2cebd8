import Foundation
import CMediaKitPlugin
import XCTest
@testable import MediaKit

/// Oracle: the muxer factory of plugin ABI 2.5 (Include/mediakit/mediakit_plugin.h, "Muxers")
/// and the catalogue's rule that plugin writers come after every built-in one. The plugin is a
/// toy format compiled from C at test time ("MKTX", then packets of one length byte and that
/// many bytes: the toy format PluginDemuxerTests reads), whose header is first written as "MKTQ"
/// and set to "MKTX" by a seek back at finish, so what the file must hold is known byte for byte.
extension RegistryTests {
    /// The toy muxer plugin; `formatSize` is the format entries' struct_size.
    private func toyMuxerPlugin(name: String = "toymux", formatSize: String = "sizeof(mk_plugin_muxer_format)") throws -> String {
        try compilePlugin(name: name, factories: """
            return strcmp(id, MK_PLUGIN_MUXER_FACTORY) == 0 ? (const void *)&factory : NULL;
            """, prelude: """
            #include <stdio.h>
            #include <stdlib.h>
            typedef struct toy { const mk_plugin_output_io *io; int tracks, started; char error[128]; } toy;
            static int32_t add_track(void *m, const mk_plugin_mux_track *t, int32_t *index) {
                toy *x = m;
                if (t == NULL || index == NULL) { strcpy(x->error, "NULL"); return MK_EINVAL; }
                if (strcmp(t->codec, "pcm_u8") != 0) { snprintf(x->error, sizeof(x->error), "toy carries pcm_u8, not %s", t->codec); return MK_EUNSUPPORTED; }
                if (t->time_base_num != 1 || t->time_base_den != 8000 || t->sample_rate != 8000) { strcpy(x->error, "wrong track"); return MK_EINVAL; }
                *index = x->tracks++;
                return MK_OK;
            }
            static int32_t write_header(void *m) {
                toy *x = m; x->started = 1;
                return x->io->write(x->io->opaque, (const uint8_t *)"MKTQ", 4);
            }
            static int32_t write_packet(void *m, const mk_plugin_mux_packet *p) {
                toy *x = m;
                if (p == NULL || p->track != 0 || p->size > 255 || !x->started) { strcpy(x->error, "bad packet"); return MK_EINVAL; }
                uint8_t len = (uint8_t)p->size;
                int32_t s = x->io->write(x->io->opaque, &len, 1);
                return s != MK_OK ? s : x->io->write(x->io->opaque, p->data, p->size);
            }
            static int32_t finish(void *m) {
                toy *x = m;
                if (x->io->seek == NULL) return MK_OK;   /* a pipe: the header stays "MKTQ" */
                int64_t end = x->io->tell(x->io->opaque);
                int32_t s = x->io->seek(x->io->opaque, 0);
                if (s == MK_OK) s = x->io->write(x->io->opaque, (const uint8_t *)"MKTX", 4);
                if (s == MK_OK) s = x->io->seek(x->io->opaque, end);
                return s;
            }
            static void cancel(void *m) { (void)m; }
            static const char *last_error(void *m) { return ((toy *)m)->error; }
            static void destroy(void *m) { free(m); }
            static const mk_plugin_muxer_vtable vtable = { sizeof(mk_plugin_muxer_vtable), add_track, write_header, write_packet,
                                                           finish, cancel, last_error, destroy };
            static int32_t carries(const mk_plugin_muxer_format *f, int32_t type, const char *codec) {
                (void)f; return type == MK_MEDIA_AUDIO && codec != NULL && strcmp(codec, "pcm_u8") == 0;
            }
            static int32_t create(const mk_plugin_muxer_format *f, const mk_plugin_output_io *io, void **m,
                                  const mk_plugin_muxer_vtable **v, char *err, size_t n) {
                (void)f;
                if (io == NULL || io->write == NULL || io->tell == NULL || io->tell(io->opaque) != 0) { snprintf(err, n, "bad io"); return MK_EINVAL; }
                toy *x = calloc(1, sizeof(toy)); x->io = io; *m = x; *v = &vtable; return MK_OK;
            }
            static const mk_plugin_muxer_format formats[] = {
                { \(formatSize), "mktx", "MediaKit toy", "mktx", "video/x-mktx", 5, carries, create },
                { \(formatSize), "mp4", "a toy named like a built-in writer", "mp4,mktx4", "", 5, carries, create } };
            static uint32_t count(void) { return 2; }
            static const mk_plugin_muxer_format *format_at(uint32_t i) { return i < 2 ? &formats[i] : NULL; }
            static const mk_plugin_muxer_factory factory = { sizeof(mk_plugin_muxer_factory), count, format_at };
            """)
    }

    private func toyTrack() -> CodecParameters {
        CodecParameters(mediaType: .audio, codec: "pcm_u8", sampleRate: 8000, channels: 1)
    }

    private func packet(_ data: [UInt8], at pts: Int64) -> Packet {
        Packet(trackIndex: 0, pts: pts, dts: pts, duration: Int64(data.count), isKeyframe: true, position: -1, data: data,
               timeBase: Rational(1, 8000))
    }

    private func scratchFolder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("plmux-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir
    }

    func testPluginMuxerWritesThroughTheHostOutput() throws {
        let registry = MediaRegistry()
        try registry.load(path: try toyMuxerPlugin())
        XCTAssertEqual(registry.muxerFormats.map(\.qualifiedName), ["toymux:mktx", "toymux:mp4"])
        let catalog = ContainerCatalog(plugins: registry)
        let dir = try scratchFolder()
        let out = dir.appendingPathComponent("out.mktx").path
        let format = try XCTUnwrap(catalog.muxerFormat(forPath: out))
        XCTAssertEqual(format.plugin, "toymux")
        XCTAssertEqual(format.qualifiedName, "toymux:mktx")
        XCTAssertEqual(format.codecs, ["pcm_u8"])
        let muxer = try format.make(path: out)
        XCTAssertTrue(muxer is PluginMuxer)
        XCTAssertEqual(try muxer.addTrack(toyTrack(), timeBase: Rational(1, 8000)), 0)
        try muxer.write(packet([1, 2, 3], at: 0))
        // Nothing under the final name before finish.
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        try muxer.write(packet([9, 9], at: 3))
        try muxer.finish()
        // "MKTQ" overwritten through the seek back: the bytes the toy demuxer reads.
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: out))), Array("MKTX".utf8) + [3, 1, 2, 3, 2, 9, 9])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["out.mktx"])
    }

    func testCancelAndRefusalLeaveNothing() throws {
        let registry = MediaRegistry()
        try registry.load(path: try toyMuxerPlugin())
        let catalog = ContainerCatalog(plugins: registry)
        let dir = try scratchFolder()
        let out = dir.appendingPathComponent("out.mktx").path
        let muxer = try catalog.makeMuxer(path: out)
        _ = try muxer.addTrack(toyTrack(), timeBase: Rational(1, 8000))
        try muxer.write(packet([1], at: 0))
        muxer.cancel()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])
        // A codec the plugin does not carry: its message, the track named.
        let second = try catalog.makeMuxer(path: out)
        XCTAssertThrowsError(try second.addTrack(CodecParameters(mediaType: .audio, codec: "opus", sampleRate: 48000, channels: 2),
                                                 timeBase: Rational(1, 48000))) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .unsupported)
            XCTAssertTrue("\(error)".contains("toy carries pcm_u8, not opus") && "\(error)".contains("toymux:mktx"), "\(error)")
        }
        XCTAssertThrowsError(try second.finish())   // no track
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])
    }

    func testBuiltInWritersWinAndAPluginNamedLikeOneIsUsedOnlyByItsQualifiedName() throws {
        let registry = MediaRegistry()
        try registry.load(path: try toyMuxerPlugin())
        let catalog = ContainerCatalog(plugins: registry)
        let names = catalog.muxerFormats.map(\.qualifiedName)
        XCTAssertEqual(Array(names.prefix(ContainerCatalog.builtInMuxers.count)), ContainerCatalog.builtInMuxers.map(\.name))
        XCTAssertEqual(Array(names.suffix(2)), ["toymux:mktx", "toymux:mp4"])
        XCTAssertNil(catalog.muxerFormat(forPath: "a.mp4")?.plugin)
        XCTAssertNil(catalog.muxerFormat(forPath: "a.mktx4"))      // its other extension: still not by extension
        XCTAssertNil(catalog.muxerFormat(named: "mp4")?.plugin)
        XCTAssertEqual(catalog.muxerFormat(named: "toymux:mp4")?.plugin, "toymux")
        XCTAssertEqual(catalog.muxerFormat(named: "mktx")?.qualifiedName, "toymux:mktx")
        XCTAssertThrowsError(try catalog.requireMuxerFormat(named: "nope")) { XCTAssertEqual(($0 as? MediaError)?.kind, .notFound) }
    }

    func testWithoutPluginsTheWriterErrorNamesThePluginToLoad() throws {
        XCTAssertThrowsError(try ContainerCatalog(plugins: MediaRegistry()).requireMuxerFormat(forPath: "x.avi")) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .unsupported)
            XCTAssertTrue("\(error)".contains("libMediaKitPluginFFmpeg.so") && "\(error)".contains(".avi"), "\(error)")
        }
    }

    func testPluginsOfABI24And22WithoutMuxerFactoryLoad() throws {
        for (name, abi) in [("old24", "{ 2, 4 }"), ("old22", "{ 2, 2 }")] {
            let registry = MediaRegistry()
            let plugin = try registry.load(path: try compilePlugin(name: name, abi: abi))
            XCTAssertEqual(plugin?.name, name)
            XCTAssertTrue(registry.muxerFormats.isEmpty)
            XCTAssertTrue(ContainerCatalog(plugins: registry).pluginMuxerFormats.isEmpty)
        }
    }

    func testMalformedMuxerFormatIsRefused() throws {
        let path = try toyMuxerPlugin(name: "shortmux", formatSize: "offsetof(mk_plugin_muxer_format, carries)")
        XCTAssertThrowsError(try MediaRegistry().load(path: path)) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .pluginABI)
            XCTAssertTrue("\(error)".contains("muxer format 0"), "\(error)")
        }
    }
}
