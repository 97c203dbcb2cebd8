import Foundation
import CMediaKitPlugin
import XCTest
@testable import MediaKit

/// Oracle: the plugin ABI contract in Include/mediakit/mediakit_plugin.h; test plugins
/// are compiled from C at test time with the system C compiler.
final class RegistryTests: XCTestCase {
    /// Compiles `body` (C, after `#include "mediakit/mediakit_plugin.h"`) into a plugin file.
    func compile(_ body: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-plugin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let include = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Include").path
        let source = dir.appendingPathComponent("p.c")
        try """
        #include "mediakit/mediakit_plugin.h"
        #include <stddef.h>
        #include <string.h>
        #define EXPORT __attribute__((visibility("default")))
        \(body)
        """.write(to: source, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("libMediaKitPluginTest.so").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["cc", "-std=c11", "-Wall", "-Werror", "-shared", "-fPIC", "-I", include, source.path, "-o", out]
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "cc failed")
        return out
    }

    /// A v2 plugin: `init` checks the host struct it is given (size, ABI major, strings, log)
    /// and returns `initResult`; `get_factory` answers `factories` (C statements, `id` in scope).
    func compilePlugin(name: String, abi: String = "MK_PLUGIN_ABI_CURRENT", structSize: String = "sizeof(mk_plugin_descriptor)",
                               description: String = "\"test plugin\"", initResult: String = "MK_OK",
                               factories: String = "(void)id; return NULL;", prelude: String = "") throws -> String {
        try compile("""
        \(prelude)
        static int32_t init(const mk_host *h) {
            if (h == NULL || h->struct_size < sizeof(mk_host) || h->abi.major != MK_PLUGIN_ABI_MAJOR ||
                h->name == NULL || strcmp(h->name, "MediaKit") != 0 || h->version == NULL || h->log == NULL)
                return MK_EINVAL;
            return \(initResult);
        }
        static void deinit(void) {}
        static const void *get_factory(const char *id) { \(factories) }
        static const mk_plugin_descriptor desc = { \(abi), \(structSize), "\(name)", "0.1", init, deinit, get_factory, \(description) };
        EXPORT const mk_plugin_descriptor *mediakit_plugin_entry(void) { return &desc; }
        """)
    }

    func testVersion1PluginIsRefusedNamingBothVersions() throws {
        // The layout of plugin ABI version 1: abi_version first, then struct_size, name ...
        let path = try compile("""
        typedef struct v1_descriptor { uint32_t abi_version, struct_size; const char *name, *version, *description;
                                       uint32_t backend_count; const void *backends; void *reserved[8]; } v1_descriptor;
        static const v1_descriptor desc = { 1, sizeof(v1_descriptor), "old", "0.1", "a v1 plugin", 0, 0, {0} };
        EXPORT const v1_descriptor *mediakit_plugin_entry(void) { return &desc; }
        """)
        let registry = MediaRegistry()
        XCTAssertThrowsError(try registry.load(path: path)) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .pluginABI)
            XCTAssertTrue(e.message.contains("plugin ABI version 1 "), e.message)
            XCTAssertTrue(e.message.contains("plugin ABI version 2 "), e.message)
            XCTAssertTrue(e.path == path, "\(e)")
        }
        XCTAssertTrue(registry.plugins.isEmpty)
    }

    func testPluginBuiltForAnotherMajorVersionIsRefused() throws {
        let path = try compilePlugin(name: "future", abi: "{ 99, 3 }")
        let registry = MediaRegistry()
        XCTAssertThrowsError(try registry.load(path: path)) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .pluginABI)
            XCTAssertTrue(e.message.contains("version 99.3"), e.message)
            XCTAssertTrue(e.message.contains("version 2 (2.\(MK_PLUGIN_ABI_MINOR)"), e.message)
        }
        XCTAssertTrue(registry.plugins.isEmpty)
    }

    func testPluginWithCurrentABILoads() throws {
        let path = try compilePlugin(name: "empty")
        let registry = MediaRegistry()
        XCTAssertEqual(registry.generation, 0)
        let plugin = try registry.load(path: path)
        XCTAssertEqual(plugin?.name, "empty")
        XCTAssertEqual(plugin?.summary, "test plugin")
        XCTAssertEqual(registry.plugins.map(\.path), [path])
        // What the C API's listings are kept by: a plugin added changes it, the same file again does not.
        XCTAssertEqual(registry.generation, 1)
        _ = try registry.load(path: path)
        XCTAssertEqual(registry.generation, 1)
    }

    /// A catalogue's generation changes with a format registered in it or a plugin added to its
    /// registry (the C API keeps its container listing while it stays the same).
    func testCatalogueGenerationFollowsRegistrationsAndPlugins() throws {
        let registry = MediaRegistry()
        let catalog = ContainerCatalog(plugins: registry)
        let start = catalog.generation
        catalog.register(catalog.formats[0])
        let afterReader = catalog.generation
        XCTAssertNotEqual(afterReader, start)
        catalog.register(catalog.muxerFormats[0])
        XCTAssertNotEqual(catalog.generation, afterReader)
        let afterWriter = catalog.generation
        _ = try registry.load(path: try compilePlugin(name: "empty"))
        XCTAssertNotEqual(catalog.generation, afterWriter)
    }

    func testNewerMinorVersionLoads() throws {
        // Built against a later 2.x header: a larger descriptor with a field this host does not know.
        let path = try compile("""
        static int32_t init(const mk_host *h) { (void)h; return MK_OK; }
        static void deinit(void) {}
        static const void *get_factory(const char *id) { (void)id; return NULL; }
        static const struct { mk_plugin_descriptor d; const char *later; } desc = {
            { { MK_PLUGIN_ABI_MAJOR, MK_PLUGIN_ABI_MINOR + 5 }, sizeof(desc), "newer", "0.1", init, deinit, get_factory, "x" }, "later" };
        EXPORT const mk_plugin_descriptor *mediakit_plugin_entry(void) { return &desc.d; }
        """)
        XCTAssertEqual(try MediaRegistry().load(path: path)?.name, "newer")
    }

    func testOlderMinorWithSmallerStructLoadsAndItsMissingFieldsAreAbsent() throws {
        // A plugin whose descriptor ends before `description` (as a 2.x plugin built before a
        // field was appended would): it loads, and what lies past its struct_size (here a bogus
        // pointer) is never read.
        let path = try compilePlugin(name: "older", structSize: "offsetof(mk_plugin_descriptor, description)",
                                     description: "(const char *)8")
        let registry = MediaRegistry()
        let plugin = try registry.load(path: path)
        XCTAssertEqual(plugin?.name, "older")
        XCTAssertEqual(plugin?.summary, "")
    }

    func testDescriptorSmallerThanVersion2IsRefused() throws {
        let path = try compilePlugin(name: "tiny", structSize: "offsetof(mk_plugin_descriptor, init)")
        XCTAssertThrowsError(try MediaRegistry().load(path: path)) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .pluginABI)
            XCTAssertTrue(e.message.contains("smaller than"), e.message)
        }
    }

    func testPluginWhoseInitFailsIsRefused() throws {
        let path = try compilePlugin(name: "unwilling", initResult: "MK_EFAIL")
        let registry = MediaRegistry()
        XCTAssertThrowsError(try registry.load(path: path)) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .pluginABI)
            XCTAssertTrue(e.message.contains("init refused"), e.message)
        }
        XCTAssertTrue(registry.plugins.isEmpty)
    }

    func testFactoriesAreListedByIdAndADecoderIsMadeThroughOne() throws {
        // One decoder backend ("pcm_test", which outputs nothing) and no converter factory.
        let path = try compilePlugin(name: "factory", factories: """
            if (strcmp(id, MK_PLUGIN_DECODER_FACTORY) == 0) return &factory;
            return NULL;
            """, prelude: """
            static int32_t send(void *d, const mk_plugin_packet *p) { (void)d; (void)p; return MK_OK; }
            static int32_t receive(void *d, mk_plugin_frame *f) { (void)d; (void)f; return MK_EAGAIN; }
            static void flush(void *d) { (void)d; }
            static void destroy(void *d) { (void)d; }
            static const char *last_error(void *d) { (void)d; return ""; }
            static const mk_plugin_decoder_vtable vtable = { sizeof(vtable), send, receive, flush, destroy, last_error };
            static int instance;
            static int32_t create(const mk_plugin_codec_config *c, void **dec, const mk_plugin_decoder_vtable **vt, char *e, size_t n) {
                (void)c; (void)e; (void)n; *dec = &instance; *vt = &vtable; return MK_OK;
            }
            static const mk_plugin_decoder_backend backend = { sizeof(backend), MK_MEDIA_AUDIO, "pcm_test", "tester", 150, create };
            static uint32_t count(void) { return 1; }
            static const mk_plugin_decoder_backend *get(uint32_t i) { return i == 0 ? &backend : NULL; }
            static const mk_plugin_decoder_factory factory = { sizeof(factory), count, get };
            """)
        let registry = MediaRegistry()
        try registry.load(path: path)
        XCTAssertEqual(registry.backends.map { "\($0.codec) \($0.name) \($0.priority) \($0.mediaType)" }, ["pcm_test tester 150 audio"])
        XCTAssertTrue(registry.converters.isEmpty)
        let decoder = try registry.makeDecoder(for: CodecParameters(mediaType: .audio, codec: "pcm_test"), timeBase: Rational(1, 48000))
        XCTAssertNil(try decoder.receive())
    }

    /// A plugin's failure keeps the plugin's status and message as the error's underlying cause
    /// (issue 29 item 10): a create that refuses (the registry's "every decoder failed" error)
    /// and a send that rejects a packet (MK_EDATA, the plugin's last_error).
    func testPluginFailuresKeepTheStatusAndMessageAsTheUnderlyingCause() throws {
        let path = try compilePlugin(name: "picky", factories: """
            if (strcmp(id, MK_PLUGIN_DECODER_FACTORY) == 0) return &factory;
            return NULL;
            """, prelude: """
            #include <stdio.h>
            static int32_t send(void *d, const mk_plugin_packet *p) { (void)d; (void)p; return MK_EDATA; }
            static int32_t receive(void *d, mk_plugin_frame *f) { (void)d; (void)f; return MK_EAGAIN; }
            static void flush(void *d) { (void)d; }
            static void destroy(void *d) { (void)d; }
            static const char *last_error(void *d) { (void)d; return "bad slice header"; }
            static const mk_plugin_decoder_vtable vtable = { sizeof(vtable), send, receive, flush, destroy, last_error };
            static int instance;
            static int32_t create(const mk_plugin_codec_config *c, void **dec, const mk_plugin_decoder_vtable **vt, char *e, size_t n) {
                if (c->sample_rate != 8000) { snprintf(e, n, "only 8000 Hz, not %d", c->sample_rate); return MK_EUNSUPPORTED; }
                *dec = &instance; *vt = &vtable; return MK_OK;
            }
            static const mk_plugin_decoder_backend backend = { sizeof(backend), MK_MEDIA_AUDIO, "pcm_test", "picky", 150, create };
            static uint32_t count(void) { return 1; }
            static const mk_plugin_decoder_backend *get(uint32_t i) { return i == 0 ? &backend : NULL; }
            static const mk_plugin_decoder_factory factory = { sizeof(factory), count, get };
            """)
        let registry = MediaRegistry()
        try registry.load(path: path)
        var params = CodecParameters(mediaType: .audio, codec: "pcm_test")
        params.sampleRate = 44100
        XCTAssertThrowsError(try registry.makeDecoder(for: params, timeBase: Rational(1, 44100))) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .backend)
            XCTAssertEqual(e.underlying, .plugin(status: MK_EUNSUPPORTED, message: "only 8000 Hz, not 44100"))
        }
        params.sampleRate = 8000
        let decoder = try registry.makeDecoder(for: params, timeBase: Rational(1, 8000))
        XCTAssertThrowsError(try decoder.send(Packet(trackIndex: 0, pts: 0, dts: 0, duration: 1, isKeyframe: true, data: [1, 2, 3], timeBase: Rational(1, 8000)))) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .invalidData)
            XCTAssertEqual(e.underlying, .plugin(status: MK_EDATA, message: "bad slice header"))
            XCTAssertTrue(e.message.contains("bad slice header"), e.message)
        }
    }

    /// Two threads converting through one PicturePipeline (as two threads calling mk_frame_pack
    /// share the C API's pipeline) run their conversions at the same time (issue 29 item 10).
    /// The test converter's convert() waits, up to 10 s, until another conversion is in flight
    /// and fails if none comes: with the pipeline's lock held across a conversion, both fail.
    func testConversionsOnTwoThreadsRunAtTheSameTime() throws {
        let path = try compilePlugin(name: "rendezvous", factories: """
            if (strcmp(id, MK_PLUGIN_PICTURE_CONVERTER_FACTORY) == 0) return &factory;
            return NULL;
            """, prelude: """
            #include <stdlib.h>
            #include <stdatomic.h>
            #include <threads.h>
            #include <time.h>
            typedef struct { int w, h; } conv_t;
            static atomic_int in_flight, met;
            static void release(void *p) { free(p); }
            static int32_t convert(void *c, const mk_plugin_frame *src, mk_plugin_frame *dst) {
                conv_t *cv = c;
                if (atomic_fetch_add(&in_flight, 1) + 1 >= 2) atomic_store(&met, 1);
                for (int i = 0; i < 10000 && !atomic_load(&met); i++) {
                    struct timespec t = { 0, 1000000 }; thrd_sleep(&t, NULL);
                }
                atomic_fetch_sub(&in_flight, 1);
                if (!atomic_load(&met)) return MK_EFAIL;
                uint32_t size = dst->struct_size;
                *dst = *src;
                dst->struct_size = size;
                dst->format = MK_PIXEL_NV12;
                uint8_t *buf = calloc((size_t)(cv->w * cv->h * 3 / 2), 1);
                if (buf == NULL) return MK_ENOMEM;
                memset(dst->planes, 0, sizeof(dst->planes)); memset(dst->strides, 0, sizeof(dst->strides));
                dst->plane_count = 2;
                dst->planes[0] = buf; dst->strides[0] = cv->w;
                dst->planes[1] = buf + cv->w * cv->h; dst->strides[1] = cv->w;
                dst->release = release; dst->release_opaque = buf;
                return MK_OK;
            }
            static void destroy(void *c) { free(c); }
            static const char *last_error(void *c) { (void)c; return "no other conversion ran at the same time"; }
            static const mk_plugin_converter_vtable vtable = { sizeof(vtable), convert, destroy, last_error };
            static int32_t supports(int32_t s, int32_t d) { return s == MK_PIXEL_YUV444P && d == MK_PIXEL_NV12; }
            static int32_t create(const mk_plugin_converter_config *c, void **out, const mk_plugin_converter_vtable **vt, char *e, size_t n) {
                (void)e; (void)n;
                conv_t *cv = malloc(sizeof(conv_t));
                if (cv == NULL) return MK_ENOMEM;
                cv->w = c->width; cv->h = c->height; *out = cv; *vt = &vtable; return MK_OK;
            }
            static const mk_plugin_picture_converter conv = { sizeof(conv), "rendezvous", 100, supports, create, 0 };
            static uint32_t count(void) { return 1; }
            static const mk_plugin_picture_converter *get(uint32_t i) { return i == 0 ? &conv : NULL; }
            static const mk_plugin_picture_converter_factory factory = { sizeof(factory), count, get };
            """)
        let registry = MediaRegistry()
        try registry.load(path: path)
        let pipeline = PicturePipeline(layout: .nv12, registry: registry)
        let frame = TestPictures.make(.yuv444p, width: 16, height: 8)
        let lock = NSLock()
        nonisolated(unsafe) var failures: [String] = []
        let done = DispatchGroup()
        for i in 1...2 {   // two threads of their own (a queue might run both on one)
            done.enter()
            Thread {
                do { _ = try pipeline.prepare(frame) } catch {
                    lock.withLock { failures.append("thread \(i): \(error)") }
                }
                done.leave()
            }.start()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(lock.withLock { failures }, [])
    }

    /// A test encoder plugin (ABI 2.1): codec "pcm_test", s16 mono, frames of 4 samples, a delay
    /// of 2 and the cookie "cookie"; each packet is its frame's bytes. `backendSize` and
    /// `extra` let a test shrink the backend struct or append a field (a newer minor version).
    private func compileEncoderPlugin(name: String, backendSize: String = "sizeof(mk_plugin_encoder_backend)",
                                      newer: Bool = false) throws -> String {
        try compilePlugin(name: name, factories: """
            if (strcmp(id, MK_PLUGIN_ENCODER_FACTORY) == 0) return &factory;
            return NULL;
            """, prelude: """
            #include <stdio.h>
            typedef struct { int16_t pending[8]; int n, draining; int64_t pts, next; uint8_t out[16]; int out_n; int has; } enc_t;
            static enc_t instance;
            static const uint8_t cookie[] = "cookie";
            static void fill(void *dst, const void *src, size_t own) {
                uint32_t host; memcpy(&host, dst, 4); uint32_t n = host < own ? host : (uint32_t)own;
                memcpy(dst, src, n); memcpy(dst, &n, 4);
            }
            static int32_t info(void *e, mk_plugin_encoder_info *i) {
                (void)e; mk_plugin_encoder_info o; memset(&o, 0, sizeof(o)); o.struct_size = sizeof(o);
                o.frame_size = 4; o.encoder_delay = 2; o.sample_rate = 8000; o.channels = 1;
                o.extradata = cookie; o.extradata_size = 6; o.packet_time_base_num = 1; o.packet_time_base_den = 8000;
                fill(i, &o, sizeof(o)); return MK_OK;
            }
            static int32_t send(void *p, const mk_plugin_frame *f) {
                enc_t *e = p;
                if (e->has) return MK_EAGAIN;
                if (f == NULL) { if (e->draining) return MK_EOF; e->draining = 1; return MK_OK; }
                if (f->nb_samples > 4 || f->format != MK_SAMPLES_S16) return MK_EINVAL;
                memcpy(e->out, f->planes[0], (size_t)f->nb_samples * 2); e->out_n = f->nb_samples * 2;
                e->pts = f->pts; e->has = 1; return MK_OK;
            }
            static int32_t receive(void *p, mk_plugin_encoded_packet *pk) {
                enc_t *e = p;
                if (!e->has) return e->draining ? MK_EOF : MK_EAGAIN;
                mk_plugin_encoded_packet o; memset(&o, 0, sizeof(o)); o.struct_size = sizeof(o);
                o.flags = MK_PACKET_FLAG_KEY; o.data = e->out; o.size = (size_t)e->out_n;
                o.pts = o.dts = e->pts; o.duration = e->out_n / 2; fill(pk, &o, sizeof(o)); e->has = 0; return MK_OK;
            }
            static void destroy(void *e) { (void)e; }
            static const char *last_error(void *e) { (void)e; return ""; }
            static const mk_plugin_encoder_vtable vtable = { sizeof(vtable), info, send, receive, destroy, last_error };
            static int32_t create(const mk_plugin_encoder_config *c, void **e, const mk_plugin_encoder_vtable **vt, char *b, size_t n) {
                if (c->sample_rate != 8000) { snprintf(b, n, "pcm_test takes 8000 Hz only, not %d", c->sample_rate); return MK_EUNSUPPORTED; }
                memset(&instance, 0, sizeof(instance)); *e = &instance; *vt = &vtable; return MK_OK;
            }
            static const int32_t formats[] = { MK_SAMPLES_S16, 0 };
            static const int32_t rates[] = { 8000, 0 };
            static const struct { mk_plugin_encoder_backend b; const char *later; } backend = {
                { \(backendSize), MK_MEDIA_AUDIO, "pcm_test", "tester", 150, formats, rates, 0, 0, 1, NULL, 0, 0, create },
                "a field of a later minor version" };
            static uint32_t count(void) { return 1; }
            static const mk_plugin_encoder_backend *get(uint32_t i) { return i == 0 ? &backend.b : NULL; }
            static const struct { mk_plugin_encoder_factory f; void *later; } factory = { { \(newer ? "sizeof(factory)" : "sizeof(mk_plugin_encoder_factory)"), count, get }, NULL };
            """)
    }

    func testEncoderFactoryIsListedAndItsEncoderGetsWholeFrames() throws {
        let registry = MediaRegistry()
        try registry.load(path: try compileEncoderPlugin(name: "encoder"))
        let b = try XCTUnwrap(registry.encoderBackends.first)
        XCTAssertEqual("\(b.codec) \(b.name) \(b.priority) \(b.sampleFormats) \(b.sampleRates) \(b.maxChannels)",
                       "pcm_test tester 150 [MediaKit.SampleFormat.s16] [8000] 1")
        XCTAssertTrue(registry.backends.isEmpty, "an encoder plugin lists no decoder")
        let encoder = try registry.makeEncoder(EncoderSettings(codec: "pcm_test"), input: AudioFormat(.s16, sampleRate: 8000, channels: 1))
        XCTAssertEqual(encoder.parameters.extradata, Array("cookie".utf8))
        XCTAssertEqual(encoder.frameSize, 4)
        XCTAssertEqual(encoder.encoderDelay, 2)
        var packets: [Packet] = []
        let samples: [Int16] = Array(1...10)
        let bytes = samples.withUnsafeBytes { Array($0) }
        try encoder.encode(AudioBuffer(format: encoder.inputFormat, frames: 10, planes: [bytes])) { packets.append($0) }
        try encoder.finish { packets.append($0) }
        XCTAssertEqual(packets.map(\.duration), [4, 4, 2], "frames of the backend's frame size, the last shorter")
        XCTAssertEqual(packets.map(\.pts), [0, 4, 8])
        XCTAssertEqual(packets.flatMap(\.data), bytes)
        XCTAssertEqual(try outcome(encoder.receiveOutput()), "endOfStream")
        XCTAssertEqual(try outcome(encoder.receiveOutput()), "endOfStream")
        XCTAssertEqual(encoder.inputSampleCount, 10)
    }

    /// Issue 29 item 6: a plugin decoder's EAGAIN and EOF are ``DecoderOutput/needsInput`` and
    /// ``DecoderOutput/endOfStream``, kept by the plugin wrapper only. The plugin holds one frame;
    /// it refuses the end of stream (NULL) while the frame waits, so the wrapper sends it again
    /// when the output runs dry; after EOF the plugin is not asked again (it would answer
    /// EAGAIN) and a packet is refused; reset starts over.
    func testAPluginDecodersEagainAndEofAreNeedsInputAndEndOfStream() throws {
        let path = try compilePlugin(name: "holder", factories: """
            if (strcmp(id, MK_PLUGIN_DECODER_FACTORY) == 0) return &factory;
            return NULL;
            """, prelude: """
            static int held, flushed;
            static int16_t sample[1];
            static int32_t send(void *d, const mk_plugin_packet *p) {
                (void)d;
                if (held) return MK_EAGAIN;
                if (p == NULL) { flushed = 1; return MK_OK; }
                held = 1; return MK_OK;
            }
            static int32_t receive(void *d, mk_plugin_frame *f) {
                (void)d;
                if (held) {
                    held = 0;
                    f->media_type = MK_MEDIA_AUDIO; f->format = MK_SAMPLES_S16; f->pts = 7; f->duration = 1;
                    f->sample_rate = 8000; f->channels = 1; f->nb_samples = 1; f->plane_count = 1;
                    f->planes[0] = (uint8_t *)sample; f->strides[0] = 2; f->release = NULL;
                    return MK_OK;
                }
                if (flushed == 1) { flushed = 2; return MK_EOF; }
                return MK_EAGAIN;   /* also after EOF: the host must not ask again */
            }
            static void flush(void *d) { (void)d; held = 0; flushed = 0; }
            static void destroy(void *d) { (void)d; }
            static const char *last_error(void *d) { (void)d; return ""; }
            static const mk_plugin_decoder_vtable vtable = { sizeof(vtable), send, receive, flush, destroy, last_error };
            static int instance;
            static int32_t create(const mk_plugin_codec_config *c, void **dec, const mk_plugin_decoder_vtable **vt, char *e, size_t n) {
                (void)c; (void)e; (void)n; *dec = &instance; *vt = &vtable; return MK_OK;
            }
            static const mk_plugin_decoder_backend backend = { sizeof(backend), MK_MEDIA_AUDIO, "pcm_test", "holder", 150, create };
            static uint32_t count(void) { return 1; }
            static const mk_plugin_decoder_backend *get(uint32_t i) { return i == 0 ? &backend : NULL; }
            static const mk_plugin_decoder_factory factory = { sizeof(factory), count, get };
            """)
        let registry = MediaRegistry()
        try registry.load(path: path)
        let decoder = try registry.makeDecoder(for: CodecParameters(mediaType: .audio, codec: "pcm_test", sampleRate: 8000, channels: 1),
                                               timeBase: Rational(1, 8000))
        let packet = Packet(trackIndex: 0, pts: 7, dts: 7, duration: 1, isKeyframe: true, data: [1, 2], timeBase: Rational(1, 8000))
        XCTAssertEqual(try outcome(decoder.receiveOutput()), "needsInput")
        XCTAssertEqual(try decoder.send(packet), .accepted)
        try decoder.flush()                                   // refused (EAGAIN): the frame waits
        XCTAssertEqual(try outcome(decoder.receiveOutput()), "frame 7")
        XCTAssertEqual(try outcome(decoder.receiveOutput()), "endOfStream")   // NULL sent again, then EOF
        XCTAssertEqual(try outcome(decoder.receiveOutput()), "endOfStream")
        XCTAssertThrowsError(try decoder.send(packet)) { XCTAssertEqual(($0 as? MediaError)?.kind, .state) }
        decoder.reset()
        XCTAssertEqual(try outcome(decoder.receiveOutput()), "needsInput")
        XCTAssertEqual(try decoder.send(packet), .accepted)
        XCTAssertEqual(try outcome(decoder.receiveOutput()), "frame 7")
    }

    func testEncoderRefusalNamesWhatTheBackendAccepts() throws {
        let registry = MediaRegistry()
        try registry.load(path: try compileEncoderPlugin(name: "encoder"))
        XCTAssertThrowsError(try registry.makeEncoder(EncoderSettings(codec: "pcm_test"), input: AudioFormat(.s16, sampleRate: 44100, channels: 1))) { error in
            XCTAssertTrue("\(error)".contains("takes 8000 Hz only, not 44100"), "\(error)")
        }
        XCTAssertThrowsError(try registry.makeEncoder(EncoderSettings(codec: "pcm_test"), input: AudioFormat(.f32, sampleRate: 8000, channels: 1))) { error in
            XCTAssertTrue("\(error)".contains("takes s16 samples, not flt"), "\(error)")
        }
        XCTAssertThrowsError(try registry.makeEncoder(EncoderSettings(codec: "aac"), input: AudioFormat(.s16, sampleRate: 8000, channels: 1))) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .notFound)
            XCTAssertTrue("\(error)".contains("no encoder for aac"), "\(error)")
        }
    }

    func testNewerMinorEncoderStructsLoadAndTooSmallOnesAreRefused() throws {
        // Built against a later 2.x header: larger backend and factory structs (fields this host
        // does not know); they load and work.
        let newer = MediaRegistry()
        try newer.load(path: try compileEncoderPlugin(name: "newer", backendSize: "sizeof(backend)", newer: true))
        XCTAssertEqual(newer.encoderBackends.map(\.name), ["tester"])
        XCTAssertNoThrow(try newer.makeEncoder(EncoderSettings(codec: "pcm_test"), input: AudioFormat(.s16, sampleRate: 8000, channels: 1)))
        // A backend whose struct ends before `create` (the fields of 2.1 are required): refused.
        let path = try compileEncoderPlugin(name: "short", backendSize: "offsetof(mk_plugin_encoder_backend, create)")
        XCTAssertThrowsError(try MediaRegistry().load(path: path)) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .pluginABI)
            XCTAssertTrue("\(error)".contains("encoder backend 0 of the plugin is malformed"), "\(error)")
        }
        // A 2.0 plugin (no encoder factory) loads with no encoders.
        let old = MediaRegistry()
        try old.load(path: try compilePlugin(name: "old", abi: "{ 2, 0 }"))
        XCTAssertTrue(old.encoderBackends.isEmpty)
    }

    /// Plugin ABI 2.3 (issue 36): an encoder plugin built against 2.2 (its backend struct ends
    /// before `pixel_formats`) is still listed as an audio encoder and encodes as before.
    func testA22EncoderPluginStillWorksOnThe23Host() throws {
        let registry = MediaRegistry()
        try registry.load(path: try compileEncoderPlugin(name: "v22", backendSize: "offsetof(mk_plugin_encoder_backend, pixel_formats)"))
        let b = try XCTUnwrap(registry.encoderBackends.first)
        XCTAssertEqual(b.mediaType, .audio)
        XCTAssertEqual(b.pixelFormats, [])
        let encoder = try registry.makeEncoder(EncoderSettings(codec: "pcm_test"), input: AudioFormat(.s16, sampleRate: 8000, channels: 1))
        var packets: [Packet] = []
        let bytes = [Int16](1...6).withUnsafeBytes { Array($0) }
        try encoder.encode(AudioBuffer(format: encoder.inputFormat, frames: 6, planes: [bytes])) { packets.append($0) }
        try encoder.finish { packets.append($0) }
        XCTAssertEqual(packets.map(\.pts), [0, 4])
        XCTAssertEqual(packets.flatMap(\.data), bytes)
    }

    /// A 2.3 video encoder plugin: the config's video fields reach create (pixel format, size,
    /// frame rate, CRF, preset, GOP, B-frames, colour), frames carry MK_FRAME_FLAG_FORCE_KEY when
    /// asked, packets keep the plugin's pts AND dts and key flag, the reorder delay and cookie
    /// come from get_info. A video backend whose struct ends before `pixel_formats` is refused.
    func testVideoEncoderConfigFramesAndPacketsCrossTheABI() throws {
        func plugin(_ name: String, backendSize: String) throws -> String {
            try compilePlugin(name: name, factories: """
                if (strcmp(id, MK_PLUGIN_ENCODER_FACTORY) == 0) return &factory;
                return NULL;
                """, prelude: """
                #include <stdio.h>
                typedef struct { int64_t pts[8]; uint32_t flags[8]; uint8_t first[8]; int n, next, draining; char seen[256]; } enc_t;
                static enc_t st;
                static const uint8_t cookie[] = "avcC!";
                static void fill(void *dst, const void *src, size_t own) {
                    uint32_t host; memcpy(&host, dst, 4); uint32_t n = host < own ? host : (uint32_t)own;
                    memcpy(dst, src, n); memcpy(dst, &n, 4);
                }
                static int32_t info(void *e, mk_plugin_encoder_info *i) {
                    (void)e; mk_plugin_encoder_info o; memset(&o, 0, sizeof(o)); o.struct_size = sizeof(o);
                    o.extradata = cookie; o.extradata_size = 5; o.packet_time_base_num = 1; o.packet_time_base_den = 25;
                    o.reorder_delay = 1; fill(i, &o, sizeof(o)); return MK_OK;
                }
                static int32_t send(void *p, const mk_plugin_frame *f) {
                    enc_t *e = p;
                    if (f == NULL) { e->draining = 1; return MK_OK; }
                    if (f->media_type != MK_MEDIA_VIDEO || f->format != MK_PIXEL_YUV420P || f->width != 4 || f->height != 2 ||
                        f->plane_count != 3 || f->strides[0] < 4 || e->n == 8) return MK_EINVAL;
                    e->pts[e->n] = f->pts; e->flags[e->n] = f->flags; e->first[e->n] = f->planes[0][0]; e->n++; return MK_OK;
                }
                static int32_t receive(void *p, mk_plugin_encoded_packet *pk) {
                    enc_t *e = p;
                    if (!e->draining) return MK_EAGAIN;   /* everything comes out at the end, reordered */
                    if (e->next == e->n) return MK_EOF;
                    int i = e->next++;
                    mk_plugin_encoded_packet o; memset(&o, 0, sizeof(o)); o.struct_size = sizeof(o);
                    o.flags = (e->flags[i] & MK_FRAME_FLAG_FORCE_KEY) ? MK_PACKET_FLAG_KEY : 0;
                    o.data = &e->first[i]; o.size = 1; o.pts = e->pts[i]; o.dts = (int64_t)i - 1; o.duration = 1;
                    fill(pk, &o, sizeof(o)); return MK_OK;
                }
                static void destroy(void *e) { (void)e; }
                static const char *last_error(void *e) { (void)e; return ""; }
                static const mk_plugin_encoder_vtable vtable = { sizeof(vtable), info, send, receive, destroy, last_error };
                static int32_t create(const mk_plugin_encoder_config *c, void **e, const mk_plugin_encoder_vtable **vt, char *b, size_t n) {
                    if (c->struct_size < offsetof(mk_plugin_encoder_config, chroma_location) + 4 || c->media_type != MK_MEDIA_VIDEO) {
                        snprintf(b, n, "not a 2.3 video config"); return MK_EINVAL;
                    }
                    memset(&st, 0, sizeof(st));
                    snprintf(st.seen, sizeof(st.seen), "%s %d %dx%d %d/%d rc%d %.1f %s %d %d r%d p%d t%d s%d",
                             c->codec, c->pixel_format, c->width, c->height, c->frame_rate_num, c->frame_rate_den,
                             c->rate_control, c->quality, c->preset ? c->preset : "-", c->gop_size, c->max_b_frames,
                             c->color_range, c->color_primaries, c->color_trc, c->color_space);
                    *e = &st; *vt = &vtable; return MK_OK;
                }
                EXPORT const char *seen_config(void) { return st.seen; }
                static const int32_t no_samples[] = { 0 };
                static const int32_t pixels[] = { MK_PIXEL_YUV420P, MK_PIXEL_NV12, 0 };
                static const mk_plugin_encoder_backend backend = {
                    \(backendSize), MK_MEDIA_VIDEO, "vid_test", "libvidtest", 120, no_samples, NULL, 0, 0, 0, NULL, 0, 0, create, pixels };
                static uint32_t count(void) { return 1; }
                static const mk_plugin_encoder_backend *get(uint32_t i) { return i == 0 ? &backend : NULL; }
                static const mk_plugin_encoder_factory factory = { sizeof(factory), count, get };
                """)
        }
        let path = try plugin("videnc", backendSize: "sizeof(mk_plugin_encoder_backend)")
        let registry = MediaRegistry()
        try registry.load(path: path)
        let b = try XCTUnwrap(registry.encoderBackends.first)
        XCTAssertEqual("\(b.mediaType) \(b.codec) \(b.name) \(b.pixelFormats)", "video vid_test libvidtest [MediaKit.PixelFormat.yuv420p, MediaKit.PixelFormat.nv12]")
        XCTAssertThrowsError(try registry.makeEncoder(EncoderSettings(codec: "vid_test"), input: AudioFormat(.s16, sampleRate: 8000, channels: 1))) {
            XCTAssertEqual(($0 as? MediaError)?.kind, .notFound, "an audio encoder is never made from a video backend")
        }
        var input = VideoFormat(pixelFormat: .yuv420p, width: 4, height: 2, timeBase: Rational(1, 50), frameRate: Rational(25, 1))
        input.colorRange = .limited
        input.colorPrimaries = .bt709
        let encoder = try registry.makeVideoEncoder(VideoEncoderSettings(codec: "libvidtest", crf: 23, preset: "fast", gopSize: 12, maxBFrames: 0),
                                                    input: input)
        let handle = try XCTUnwrap(dlopen(path, RTLD_NOW))
        defer { dlclose(handle) }
        typealias Seen = @convention(c) () -> UnsafePointer<CChar>
        let seen = unsafeBitCast(try XCTUnwrap(dlsym(handle, "seen_config")), to: Seen.self)
        XCTAssertEqual(String(cString: seen()), "vid_test 1 4x2 25/1 rc2 23.0 fast 12 0 r1 p1 t2 s2")
        XCTAssertEqual(encoder.parameters.extradata, Array("avcC!".utf8))
        XCTAssertEqual(encoder.reorderDelay, 1)
        XCTAssertEqual(encoder.timeBase, Rational(1, 25))
        var packets: [Packet] = []
        for i in 0..<3 {
            let bytes: [UInt8] = [UInt8(10 + i), 0, 0, 0, 0, 0, 0, 0, 1, 1, 2, 2]
            let storage = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 16)
            storage.copyMemory(from: bytes, byteCount: bytes.count)
            let address = UInt(bitPattern: storage)
            let frame = Frame(mediaType: .video, pts: Int64(2 * i), duration: 2, timeBase: Rational(1, 50), pixelFormat: .yuv420p, width: 4, height: 2,
                              planes: [Plane(base: storage, stride: 4, length: 8), Plane(base: storage + 8, stride: 2, length: 2),
                                       Plane(base: storage + 10, stride: 2, length: 2)],
                              storage: FrameStorage { UnsafeMutableRawPointer(bitPattern: address)?.deallocate() })
            try encoder.encode(frame, forceKeyFrame: i != 1) { packets.append($0) }
        }
        XCTAssertTrue(packets.isEmpty)
        try encoder.finish { packets.append($0) }
        XCTAssertEqual(packets.map(\.pts), [0, 2, 4], "the frames' pts, in the input's time base as sent")
        XCTAssertEqual(packets.map(\.dts), [-1, 0, 1])
        XCTAssertEqual(packets.map(\.isKeyframe), [true, false, true])
        XCTAssertEqual(packets.map(\.data), [[10], [11], [12]])
        XCTAssertEqual(packets.map(\.timeBase), Array(repeating: Rational(1, 25), count: 3))
        XCTAssertEqual(try outcome(encoder.receiveOutput()), "endOfStream")
        XCTAssertThrowsError(try registry.makeVideoEncoder(VideoEncoderSettings(codec: "vid_test"),
                                                           input: VideoFormat(pixelFormat: .yuv444p, width: 4, height: 2, timeBase: Rational(1, 25)))) {
            XCTAssertTrue("\($0)".contains("takes yuv420p, nv12 pictures, not yuv444p"), "\($0)")
        }
        // A video backend of a plugin whose struct ends before pixel_formats: refused.
        XCTAssertThrowsError(try MediaRegistry().load(path: try plugin("short", backendSize: "offsetof(mk_plugin_encoder_backend, pixel_formats)"))) {
            XCTAssertTrue("\($0)".contains("lists no pixel formats"), "\($0)")
        }
    }

    /// The other way round: a 2.2 host (config, info and packet structs of 2.2) with the FFmpeg
    /// plugin of 2.3 encodes audio as before, finds no sample format to send a video backend,
    /// and a video backend refuses a config without the 2.3 fields.
    func testThe23FFmpegPluginServesA22Host() throws {
        let backends = MediaRegistry.shared.encoderBackends.filter { $0.plugin.name == "ffmpeg" }
        guard let aac = backends.first(where: { $0.codec == "aac" }), let x264 = backends.first(where: { $0.name == "libx264" }) else {
            // scripts/deps.sh installs Debian's libavcodec (aac, libx264): under CI their absence is ours to fix.
            let why = "the FFmpeg plugin with aac and libx264 encoders is not built (\(backends.count) FFmpeg encoder backends found)"
            if ProcessInfo.processInfo.environment["CI"] == "true" { return XCTFail(why + " (CI=true: a failure, not a skip)") }
            throw XCTSkip(why)
        }
        var errbuf = [CChar](repeating: 0, count: 512)
        func message() -> String { String(decoding: errbuf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        var cfg = mk_plugin_encoder_config()
        cfg.struct_size = UInt32(MemoryLayout<mk_plugin_encoder_config>.offset(of: \.pixel_format)!)   // 2.2's size
        cfg.media_type = MK_MEDIA_AUDIO
        cfg.sample_format = MK_SAMPLES_F32P
        cfg.sample_rate = 48000
        cfg.channels = 1
        cfg.time_base_num = 1
        cfg.time_base_den = 48000
        cfg.bit_rate = 64000
        var instance: UnsafeMutableRawPointer?
        var vt: UnsafePointer<mk_plugin_encoder_vtable>?
        let status = "aac".withCString { cfg.codec = $0; return aac.raw.pointee.create(&cfg, &instance, &vt, &errbuf, errbuf.count) }
        XCTAssertEqual(status, MK_OK, message())
        let enc = try XCTUnwrap(instance), v = try XCTUnwrap(vt)
        defer { v.pointee.destroy(enc) }
        var info = mk_plugin_encoder_info()
        let size22 = UInt32(MemoryLayout<mk_plugin_encoder_info>.offset(of: \.reorder_delay)!)
        info.struct_size = size22
        info.reorder_delay = 77
        XCTAssertEqual(v.pointee.get_info(enc, &info), MK_OK)
        XCTAssertEqual(info.struct_size, size22, "filled up to the host's (2.2) size")
        XCTAssertEqual(info.reorder_delay, 77, "nothing written beyond the host's struct")
        XCTAssertEqual(info.frame_size, 1024)
        XCTAssertFalse(info.extradata_size == 0)
        // What a 2.2 host reads of a video backend: media_type it ignores, an empty sample format list.
        XCTAssertEqual(x264.raw.pointee.sample_formats?.pointee, 0)
        cfg.media_type = MK_MEDIA_VIDEO
        instance = nil
        let refused = "h264".withCString { cfg.codec = $0; return x264.raw.pointee.create(&cfg, &instance, &vt, &errbuf, errbuf.count) }
        XCTAssertEqual(refused, MK_EINVAL)
        XCTAssertNil(instance)
        XCTAssertTrue(message().contains("short of the video fields of plugin ABI 2.3"), message())
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

    func testMalformedConverterFactoryIsRefused() throws {
        // The factory says one converter, and get_converter gives none.
        let path = try compilePlugin(name: "broken", factories: """
            if (strcmp(id, MK_PLUGIN_PICTURE_CONVERTER_FACTORY) == 0) return &factory;
            return NULL;
            """, prelude: """
            static uint32_t count(void) { return 1; }
            static const mk_plugin_picture_converter *get(uint32_t i) { (void)i; return NULL; }
            static const mk_plugin_picture_converter_factory factory = { sizeof(factory), count, get };
            """)
        let registry = MediaRegistry()
        XCTAssertThrowsError(try registry.load(path: path)) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .pluginABI)
            XCTAssertTrue(e.message.contains("picture converter 0 of the plugin is malformed"), e.message)
        }
        XCTAssertTrue(registry.plugins.isEmpty)
    }

    func testScalingIsAskedOnlyOfConvertersThatScale() throws {
        // A converter of plugin ABI 2.1 (its struct ends before `flags`) changes formats only:
        // the registry uses it for that and never hands it a size change it would ignore.
        let path = try compilePlugin(name: "oldconv", factories: """
            if (strcmp(id, MK_PLUGIN_PICTURE_CONVERTER_FACTORY) == 0) return &factory;
            return NULL;
            """, prelude: """
            static int32_t supports(int32_t s, int32_t d) { return s == MK_PIXEL_YUV420P && d == MK_PIXEL_NV12; }
            static int32_t convert(void *c, const mk_plugin_frame *s, mk_plugin_frame *d) { (void)c; (void)s; (void)d; return MK_EFAIL; }
            static void destroy(void *c) { (void)c; }
            static const char *last_error(void *c) { (void)c; return ""; }
            static const mk_plugin_converter_vtable vt = { sizeof(vt), convert, destroy, last_error };
            static int instance;
            static int32_t create(const mk_plugin_converter_config *cfg, void **c, const mk_plugin_converter_vtable **v,
                                  char *e, size_t n) {
                (void)e; (void)n;
                if (cfg->struct_size >= offsetof(mk_plugin_converter_config, scale_filter) + 4 && cfg->dst_width != 0)
                    return MK_EINVAL;   /* the host must send 0: this converter does not scale */
                *c = &instance; *v = &vt; return MK_OK;
            }
            static const mk_plugin_picture_converter conv = {
                offsetof(mk_plugin_picture_converter, flags), "old", 1, supports, create, 0 };
            static uint32_t count(void) { return 1; }
            static const mk_plugin_picture_converter *get(uint32_t i) { return i == 0 ? &conv : NULL; }
            static const mk_plugin_picture_converter_factory factory = { sizeof(factory), count, get };
            """)
        let registry = MediaRegistry()
        try registry.load(path: path)
        let converter = try XCTUnwrap(registry.converters.first)
        XCTAssertFalse(converter.scales)
        let same = try registry.makePictureConverter(from: .yuv420p, to: .nv12, width: 64, height: 48)
        XCTAssertEqual([same.outputWidth, same.outputHeight], [64, 48])
        XCTAssertThrowsError(try registry.makePictureConverter(from: .yuv420p, to: .nv12, width: 64, height: 48,
                                                               outputWidth: 32, outputHeight: 24)) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .notFound)
            XCTAssertTrue(e.message.contains("that scales 64x48 to 32x24 (bicubic; plugin ABI 2.2)"), e.message)
        }
        XCTAssertThrowsError(try registry.makePictureConverter(from: .yuv420p, to: .nv12, width: 64, height: 48,
                                                               outputWidth: 0, outputHeight: 24)) { error in
            XCTAssertEqual((error as! MediaError).kind, .invalidArgument)
        }
        // The filters are the shared header's values, named as FFmpeg's scale filter names them.
        let filters: [ScaleFilter: Int32] = [
            .fastBilinear: MK_SCALE_FAST_BILINEAR, .bilinear: MK_SCALE_BILINEAR, .bicubic: MK_SCALE_BICUBIC,
            .neighbor: MK_SCALE_NEIGHBOR, .area: MK_SCALE_AREA, .lanczos: MK_SCALE_LANCZOS,
        ]
        XCTAssertEqual(Set(filters.keys), Set(ScaleFilter.allCases))
        for (filter, value) in filters {
            XCTAssertEqual(filter.rawValue, value, filter.name)
            XCTAssertEqual(ScaleFilter(name: filter.name), filter)
        }
        XCTAssertEqual(ScaleFilter(code: MK_SCALE_DEFAULT), .bicubic)
        XCTAssertNil(ScaleFilter(code: 99))
    }

    func testFormatValuesAreThoseOfTheSharedHeader() {
        // mediakit_types.h is the one list of values, for plugins and applications alike.
        let pixels: [PixelFormat: Int32] = [
            .yuv420p: MK_PIXEL_YUV420P, .yuvj420p: MK_PIXEL_YUVJ420P, .yuv422p: MK_PIXEL_YUV422P,
            .yuvj422p: MK_PIXEL_YUVJ422P, .yuv444p: MK_PIXEL_YUV444P, .yuvj444p: MK_PIXEL_YUVJ444P,
            .nv12: MK_PIXEL_NV12, .yuv420p10: MK_PIXEL_YUV420P10, .yuv422p10: MK_PIXEL_YUV422P10,
            .yuv444p10: MK_PIXEL_YUV444P10, .p010: MK_PIXEL_P010, .gray8: MK_PIXEL_GRAY8,
            .gray10: MK_PIXEL_GRAY10, .yuv420p12: MK_PIXEL_YUV420P12, .rgb24: MK_PIXEL_RGB24, .bgr24: MK_PIXEL_BGR24,
            .rgba: MK_PIXEL_RGBA, .bgra: MK_PIXEL_BGRA, .gray16: MK_PIXEL_GRAY16, .rgb48: MK_PIXEL_RGB48,
        ]
        XCTAssertEqual(Set(pixels.keys), Set(PixelFormat.allCases))
        for (format, value) in pixels { XCTAssertEqual(format.rawValue, value, format.name) }
        let samples: [SampleFormat: Int32] = [
            .u8: MK_SAMPLES_U8, .s16: MK_SAMPLES_S16, .s32: MK_SAMPLES_S32, .f32: MK_SAMPLES_F32,
            .f64: MK_SAMPLES_F64, .u8Planar: MK_SAMPLES_U8P, .s16Planar: MK_SAMPLES_S16P, .s32Planar: MK_SAMPLES_S32P,
            .f32Planar: MK_SAMPLES_F32P, .f64Planar: MK_SAMPLES_F64P, .s24: MK_SAMPLES_S24, .s24Planar: MK_SAMPLES_S24P,
            .s8: MK_SAMPLES_S8, .s8Planar: MK_SAMPLES_S8P, .s16be: MK_SAMPLES_S16BE, .s16bePlanar: MK_SAMPLES_S16BEP,
            .s24be: MK_SAMPLES_S24BE, .s24bePlanar: MK_SAMPLES_S24BEP, .s32be: MK_SAMPLES_S32BE, .s32bePlanar: MK_SAMPLES_S32BEP,
            .f32be: MK_SAMPLES_F32BE, .f32bePlanar: MK_SAMPLES_F32BEP, .f64be: MK_SAMPLES_F64BE, .f64bePlanar: MK_SAMPLES_F64BEP,
            .s24In32High: MK_SAMPLES_S24IN32HI, .s24In32HighPlanar: MK_SAMPLES_S24IN32HIP,
            .s24In32Low: MK_SAMPLES_S24IN32LO, .s24In32LowPlanar: MK_SAMPLES_S24IN32LOP,
        ]
        XCTAssertEqual(Set(samples.keys), Set(SampleFormat.allCases))
        for (format, value) in samples { XCTAssertEqual(format.rawValue, value, format.name) }
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
