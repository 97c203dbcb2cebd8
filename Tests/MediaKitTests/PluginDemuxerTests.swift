import Foundation
import CMediaKitPlugin
import XCTest
@testable import MediaKit

/// Oracle: the demuxer factory of plugin ABI 2.4 (Include/mediakit/mediakit_plugin.h,
/// "Demuxers") and the catalogue's rule that plugin formats come after every built-in one. The
/// plugin is a toy format compiled from C at test time ("MKTX", then packets of one length byte
/// and that many bytes), so what it must give is known byte for byte.
extension RegistryTests {
    /// The toy plugin; `score` is C returning the score (head, size in scope), `formatSize` the
    /// format entry's struct_size.
    private func toyPlugin(name: String = "toy", score: String = "return size >= 4 && memcmp(head, \"MKTX\", 4) == 0 ? 90 : 0;",
                           formatSize: String = "sizeof(mk_plugin_demuxer_format)") throws -> String {
        try compilePlugin(name: name, factories: """
            return strcmp(id, MK_PLUGIN_DEMUXER_FACTORY) == 0 ? (const void *)&factory : NULL;
            """, prelude: """
            #include <stdio.h>
            #include <stdlib.h>
            typedef struct toy { const mk_plugin_io *io; int64_t count; uint8_t data[256]; char error[128]; } toy;
            static int get(const mk_plugin_io *io, uint8_t *buf, size_t n) {
                size_t done = 0;
                while (done < n) { int64_t r = io->read(io->opaque, buf + done, n - done); if (r <= 0) return (int)r; done += (size_t)r; }
                return 1;
            }
            static uint32_t track_count(void *d) { (void)d; return 1; }
            static int32_t get_track(void *d, uint32_t i, mk_plugin_track_info *info) {
                (void)d;
                if (i != 0 || info == NULL) return MK_EINVAL;
                mk_plugin_track_info t = { 0 };
                t.struct_size = info->struct_size < sizeof(t) ? info->struct_size : sizeof(t);
                t.media_type = MK_MEDIA_AUDIO; t.codec = "pcm_u8"; t.codec_tag = ""; t.time_base_num = 1; t.time_base_den = 8000;
                t.duration = MK_NOPTS_VALUE; t.start_time = 0; t.sample_rate = 8000; t.channels = 1; t.language = "fra"; t.title = "toy";
                memcpy(info, &t, t.struct_size);
                return MK_OK;
            }
            static int32_t get_info(void *d, mk_plugin_demuxer_info *info) {
                (void)d; mk_plugin_demuxer_info i = { 0 };
                i.struct_size = info->struct_size < sizeof(i) ? info->struct_size : sizeof(i);
                i.format_name = "mktx"; i.duration_us = MK_NOPTS_VALUE; i.start_time_us = MK_NOPTS_VALUE;
                memcpy(info, &i, i.struct_size); return MK_OK;
            }
            static int32_t read_packet(void *d, mk_plugin_demuxed_packet *p) {
                toy *t = d; uint8_t len;
                int r = get(t->io, &len, 1);
                if (r == 0) return MK_EOF;
                if (r < 0 || get(t->io, t->data, len) != 1) { strcpy(t->error, "a packet cut short"); return MK_EDATA; }
                mk_plugin_demuxed_packet out = { 0 };
                out.struct_size = p->struct_size < sizeof(out) ? p->struct_size : sizeof(out);
                out.flags = MK_PACKET_FLAG_KEY; out.track = 0; out.data = t->data; out.size = len;
                out.pts = out.dts = t->count; out.duration = len; out.position = -1;
                t->count += len;
                memcpy(p, &out, out.struct_size);
                return MK_OK;
            }
            static int32_t seek(void *d, int64_t us, uint32_t flags) {
                toy *t = d; (void)us; (void)flags;
                if (t->io->seek == NULL) { strcpy(t->error, "cannot seek a pipe"); return MK_EUNSUPPORTED; }
                t->count = 0; return t->io->seek(t->io->opaque, 4);
            }
            static const char *last_error(void *d) { return ((toy *)d)->error; }
            static void destroy(void *d) { free(d); }
            static const mk_plugin_demuxer_vtable vtable = { sizeof(mk_plugin_demuxer_vtable), track_count, get_track, get_info,
                                                             read_packet, seek, last_error, destroy };
            static int32_t score(const mk_plugin_demuxer_format *f, const uint8_t *head, size_t size, int64_t total) {
                (void)f; (void)total; \(score)
            }
            static int32_t create(const mk_plugin_demuxer_format *f, const mk_plugin_io *io, void **d,
                                  const mk_plugin_demuxer_vtable **v, char *err, size_t n) {
                (void)f; uint8_t magic[4];
                if (get(io, magic, 4) != 1 || memcmp(magic, "MKTX", 4) != 0) { snprintf(err, n, "no MKTX signature"); return MK_EDATA; }
                toy *t = calloc(1, sizeof(toy)); t->io = io; *d = t; *v = &vtable; return MK_OK;
            }
            static const mk_plugin_demuxer_format formats[] = {
                { \(formatSize), "mktx", "MediaKit toy", "mktx", "video/x-mktx", 5, score, create } };
            static uint32_t count(void) { return 1; }
            static const mk_plugin_demuxer_format *format_at(uint32_t i) { return i == 0 ? &formats[0] : NULL; }
            static const mk_plugin_demuxer_factory factory = { sizeof(mk_plugin_demuxer_factory), count, format_at };
            """)
    }

    private static let toyBytes: [UInt8] = Array("MKTX".utf8) + [3, 1, 2, 3, 2, 9, 9]

    private func packets(_ d: Demuxer) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        while let p = try d.read() { out.append(p.data) }
        return out
    }

    func testPluginDemuxerReadsWhatNoBuiltInFormatClaims() throws {
        let registry = MediaRegistry()
        try registry.load(path: try toyPlugin())
        XCTAssertEqual(registry.demuxerFormats.map(\.qualifiedName), ["toy:mktx"])
        XCTAssertEqual(registry.demuxerFormats.first?.extensions, ["mktx"])
        XCTAssertEqual(registry.demuxerFormats.first?.priority, 5)
        let catalog = ContainerCatalog(plugins: registry)
        let (format, demuxer) = try catalog.open(MemorySource(Self.toyBytes))
        XCTAssertEqual(format.plugin, "toy")
        XCTAssertEqual(format.qualifiedName, "toy:mktx")
        let plugin = try XCTUnwrap(demuxer as? PluginDemuxer)
        XCTAssertEqual(plugin.formatName, "mktx")
        XCTAssertEqual(plugin.trackTitles, ["toy"])
        XCTAssertEqual(demuxer.tracks.map(\.parameters.codec), ["pcm_u8"])
        XCTAssertEqual(demuxer.tracks.first?.language, "fra")
        XCTAssertEqual(demuxer.tracks.first?.timeBase, Rational(1, 8000))
        XCTAssertNil(demuxer.duration)
        XCTAssertEqual(try packets(demuxer), [[1, 2, 3], [9, 9]])
        // read(track:) has a position of its own; seek starts both over.
        XCTAssertEqual(try demuxer.read(track: 0)?.data, [1, 2, 3])
        try demuxer.seek(to: 0)
        let first = try XCTUnwrap(demuxer.read())
        XCTAssertEqual(first.data, [1, 2, 3])
        XCTAssertEqual(first.pts, 0)
        XCTAssertEqual(try demuxer.read()?.pts, 3)
        XCTAssertEqual(try demuxer.read(track: 0)?.data, [1, 2, 3])
        XCTAssertThrowsError(try demuxer.read(track: 1)) { XCTAssertEqual(($0 as? MediaError)?.kind, .invalidArgument) }
    }

    func testPluginDemuxerOnAPipeReadsFrontToBackAndCannotSeek() throws {
        let registry = MediaRegistry()
        try registry.load(path: try toyPlugin())
        var offset = 0
        let bytes = Self.toyBytes
        let pipe = CallbackSource(name: "pipe", size: nil, read: { buf in
            let n = min(buf.count, bytes.count - offset, 2)   // dribbles, as a pipe may
            bytes[offset..<offset + n].withUnsafeBytes { buf.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: n) }
            offset += n
            return n
        }, seek: nil)
        let demuxer = try ContainerCatalog(plugins: registry).open(pipe).demuxer
        XCTAssertEqual(try packets(demuxer), [[1, 2, 3], [9, 9]])
        XCTAssertThrowsError(try demuxer.seek(to: 0)) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .unsupported)
            XCTAssertTrue("\(error)".contains("cannot seek a pipe"), "\(error)")
        }
        XCTAssertThrowsError(try demuxer.read(track: 0)) { XCTAssertEqual(($0 as? MediaError)?.kind, .unsupported) }
    }

    func testBuiltInFormatsWinOverAGreedyPlugin() throws {
        // The toy claims everything at 100; the built-in formats still read what they claim.
        let registry = MediaRegistry()
        try registry.load(path: try toyPlugin(name: "greedy", score: "(void)head; return size > 0 ? 100 : 0;"))
        let catalog = ContainerCatalog(plugins: registry)
        let mp4 = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Samples/media/sample.mp4").path
        let (format, _) = try catalog.open(ByteSources.open(path: mp4))
        XCTAssertEqual(format.name, "mp4")
        XCTAssertNil(format.plugin)
        // Bytes no built-in format claims go to it; its refusal is part of the error.
        XCTAssertThrowsError(try catalog.open(MemorySource(Array("NOPE, not a container".utf8)))) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .unsupported)
            XCTAssertTrue("\(error)".contains("no MKTX signature") && "\(error)".contains("greedy"), "\(error)")
        }
    }

    func testNamingADemuxerForcesIt() throws {
        let registry = MediaRegistry()
        try registry.load(path: try toyPlugin())
        let catalog = ContainerCatalog(plugins: registry)
        for name in ["mktx", "toy:mktx"] {
            XCTAssertEqual(try packets(catalog.open(MemorySource(Self.toyBytes), demuxer: name).demuxer), [[1, 2, 3], [9, 9]])
        }
        XCTAssertThrowsError(try catalog.open(MemorySource(Self.toyBytes), demuxer: "nope")) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .notFound)
            XCTAssertTrue("\(error)".contains("no demuxer named 'nope'"), "\(error)")
        }
        // A built-in name picks the built-in reader, which says what it expected.
        XCTAssertThrowsError(try catalog.open(MemorySource(Self.toyBytes), demuxer: "ogg"))
    }

    func testWithoutPluginsTheErrorNamesThePluginToLoad() throws {
        XCTAssertThrowsError(try ContainerCatalog(plugins: MediaRegistry()).open(MemorySource(Self.toyBytes))) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .unsupported)
            XCTAssertTrue("\(error)".contains("libMediaKitPluginFFmpeg.so"), "\(error)")
        }
        // A catalogue made without a registry has no fallback at all.
        XCTAssertThrowsError(try ContainerCatalog().open(MemorySource(Self.toyBytes)))
    }

    func testPluginOfABI23WithoutDemuxerFactoryLoads() throws {
        let registry = MediaRegistry()
        let plugin = try registry.load(path: try compilePlugin(name: "old23", abi: "{ 2, 3 }"))
        XCTAssertEqual(plugin?.name, "old23")
        XCTAssertTrue(registry.demuxerFormats.isEmpty)
    }

    func testMalformedDemuxerFormatIsRefused() throws {
        let path = try toyPlugin(name: "short", formatSize: "offsetof(mk_plugin_demuxer_format, score)")
        XCTAssertThrowsError(try MediaRegistry().load(path: path)) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .pluginABI)
            XCTAssertTrue("\(error)".contains("demuxer format 0"), "\(error)")
        }
    }
}
