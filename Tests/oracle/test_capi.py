"""libmediakit, the C API (Include/mediakit/mediakit.h), used from C only.

Oracles:
  decode    ffmpeg -v error -i FILE -map 0:v:0 -fps_mode passthrough -f rawvideo -pix_fmt nv12 -
            and -map 0:a:0 -f s16le - (|diff| <= 1 per sample), as ORACLES.md says,
            for Samples/c/decode.c built against the header and the library only.
  exports   the header: every global symbol libmediakit defines is an mk_ function.
  misuse    Tests/c/test_capi.c (NULL and stale handles, wrong order, missing and
            corrupt files) must pass, and pass under valgrind with no definite leak
            and no invalid read or write (Tests/c/valgrind.supp names the one glibc
            loader frame it suppresses, and why).
  headers   the public headers compile on their own as C99 and C++11 with
            -Wall -Wextra -Werror.
  install   `make install PREFIX=DIR FROM=MK_BIN`, then programs built with only
            `cc ... $(pkg-config --cflags --libs mediakit)` decode like ffmpeg and remux
            with stream identity: `ffmpeg -v error -i F -map 0 -c copy -f framemd5 -`
            prints the same for the output as for the input (#software aside).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

INCLUDE = lib.REPO / "Include"
SAMPLE = lib.REPO / "Samples" / "media" / "sample.mp4"
DECODE_C = lib.REPO / "Samples" / "c" / "decode.c"
REMUX_C = lib.REPO / "Samples" / "c" / "remux.c"
TEST_C = lib.REPO / "Tests" / "c" / "test_capi.c"
SHARED_DECODE = ["mp4_h264_aac_moov_at_start_ctts_8s.mp4", "mov_h264_aac_quicktime_audio_empty_edit_bt601.mov"]


def _libdir(mk_bin: Path) -> Path:
    lib_so = mk_bin / "libmediakit.so"
    if not lib_so.is_file():
        pytest.fail(f"libmediakit.so not found in {mk_bin}; run `make build`", pytrace=False)
    return mk_bin


def _cc(args: list, what: str) -> None:
    proc = lib.run(["cc"] + args)
    if proc.returncode != 0:
        pytest.fail(f"{what}: `cc {' '.join(map(str, args))}` failed:\n{lib.tail(proc.stderr)}", pytrace=False)


def _build(source: Path, out: Path, libdir: Path) -> Path:
    _cc(["-std=c99", "-Wall", "-Wextra", "-Werror", "-I", INCLUDE, source, "-L", libdir, "-lmediakit",
         f"-Wl,-rpath,{libdir}", "-o", out], f"building {source.name}")
    return out


def _compare_decode(program: Path, media: Path, tmp_path: Path, env: dict | None = None) -> None:
    nv12, pcm = tmp_path / "out.nv12", tmp_path / "out.pcm"
    proc = lib.run([program, media, nv12, pcm], env=env)
    lib.check_ok(proc, [program, media, nv12, pcm], who=program.name)
    ref_v = lib.run(["ffmpeg", "-v", "error", "-i", media, "-map", "0:v:0", "-fps_mode", "passthrough",
                     "-f", "rawvideo", "-pix_fmt", "nv12", "-"])
    ref_a = lib.run(["ffmpeg", "-v", "error", "-i", media, "-map", "0:a:0", "-f", "s16le", "-"])
    assert ref_v.returncode == 0 and ref_a.returncode == 0, "the ffmpeg oracle failed"
    ours_v = nv12.read_bytes()
    assert len(ours_v) == len(ref_v.stdout), f"{media.name}: NV12 is {len(ours_v)} bytes, ffmpeg's {len(ref_v.stdout)}"
    assert ours_v == ref_v.stdout, f"{media.name}: NV12 through the C API differs from ffmpeg's"
    info = lib.ffprobe_json(media)
    channels = next(int(s["channels"]) for s in info["streams"] if s.get("codec_type") == "audio")
    diff = lib.compare_pcm_s16(pcm.read_bytes(), ref_a.stdout, channels)
    assert diff is None, f"{media.name}: PCM through the C API: {diff}"


def _api_headers() -> list[Path]:
    """mediakit.h and the per-object headers it includes (Include/mediakit/*.h but the plugin ABI)."""
    return sorted(h for h in (INCLUDE / "mediakit").glob("*.h") if h.name not in ("mediakit_plugin.h", "mediakit_types.h"))


def test_headers_compile_alone_as_c99_and_cxx(tmp_path):
    """Each public header on its own (mediakit.h, each per-object header it includes, the plugin
    ABI, the shared types), and the two that share mediakit_types.h together, as C99 and as
    C++11, with -Wall -Wextra -Werror."""
    headers = [f"mediakit/{h.name}" for h in _api_headers()]
    assert len(headers) > 1 and "mediakit/mediakit.h" in headers
    included = set(re.findall(r'#include "(\w+\.h)"', (INCLUDE / "mediakit" / "mediakit.h").read_text()))
    assert included == {h.name for h in _api_headers()} - {"mediakit.h"}, \
        f"mediakit.h must include every per-object header: it includes {sorted(included)}"
    for header in (*headers, "mediakit/mediakit_plugin.h", "mediakit/mediakit_types.h",
                   "mediakit/mediakit.h>\n#include <mediakit/mediakit_plugin.h"):
        c = tmp_path / "h.c"
        c.write_text(f"#include <{header}>\nint main(void) {{ return 0; }}\n")
        _cc(["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-I", INCLUDE, "-c", c, "-o", tmp_path / "h.o"],
            f"{header} as C99")
        cpp = tmp_path / "h.cpp"
        cpp.write_text(f"#include <{header}>\nint main() {{ return 0; }}\n")
        proc = lib.run(["c++", "-std=c++11", "-Wall", "-Wextra", "-Werror", "-I", INCLUDE, "-c", cpp, "-o", tmp_path / "h.o"])
        assert proc.returncode == 0, f"{header} as C++11:\n{lib.tail(proc.stderr)}"


def test_only_mk_functions_are_exported(mk_bin):
    """`nm -D --defined-only libmediakit.so`: every global symbol is an mk_ function of the header."""
    libdir = _libdir(mk_bin)
    proc = lib.run(["nm", "-D", "--defined-only", libdir / "libmediakit.so"])
    assert proc.returncode == 0
    exported = [l.split()[-1] for l in proc.stdout.decode().splitlines() if len(l.split()) == 3 and l.split()[1].isupper()]
    foreign = [s for s in exported if not s.startswith("mk_")]
    assert not foreign, f"libmediakit exports non-mk_ symbols: {foreign[:10]}"
    declared = set(re.findall(r"\b(mk_[a-z_0-9]+)\s*\(", "\n".join(h.read_text() for h in _api_headers())))
    assert set(exported) == declared, f"exported but not declared: {sorted(set(exported) - declared)}; " \
                                      f"declared but not exported: {sorted(declared - set(exported))}"


def test_misuse_returns_errors(mk_bin, tmp_path):
    """Tests/c/test_capi.c: every misuse gives an error status with a message, no crash."""
    program = _build(TEST_C, tmp_path / "test_capi", _libdir(mk_bin))
    corrupt = tmp_path / "corrupt.mp4"
    data = SAMPLE.read_bytes()
    corrupt.write_bytes(data[:3000] + bytes(b ^ 0x5A for b in data[3000:3400]) + data[3400:100000])
    proc = lib.run([program, SAMPLE, corrupt, tmp_path / "scratch.mp4"])
    out = proc.stdout.decode()
    assert proc.returncode == 0 and re.search(r"^\d+ passed, 0 failed$", out, re.M), out[-3000:]


def _stripped_libdir(mk_bin: Path, tmp_path: Path) -> Path:
    """libmediakit and the plugins copied and stripped of debug info, for valgrind (3.19 cannot
    read the DWARF 5 of Swift-built libraries)."""
    libdir = tmp_path / "lib"
    libdir.mkdir()
    for so in list(_libdir(mk_bin).glob("libmediakit.so")) + list(mk_bin.glob("libMediaKitPlugin*.so")):
        shutil.copy(so, libdir / so.name)
        subprocess.run(["strip", "--strip-debug", libdir / so.name], check=True)
    return libdir


def test_misuse_under_valgrind(mk_bin, tmp_path):
    """The same program under valgrind: "definitely lost: 0 bytes", no invalid read or write.

    valgrind 3.19 cannot read the DWARF 5 debug info of Swift-built libraries, so the
    library and plugin are copied and stripped of debug info for this run.
    """
    if not shutil.which("valgrind"):
        pytest.fail("valgrind is missing: scripts/deps.sh installs it", pytrace=False)
    libdir = _stripped_libdir(mk_bin, tmp_path)
    program = _build(TEST_C, tmp_path / "test_capi", libdir)
    corrupt = tmp_path / "corrupt.mp4"
    corrupt.write_bytes(SAMPLE.read_bytes()[:50000])
    supp = lib.REPO / "Tests" / "c" / "valgrind.supp"
    proc = lib.run(["valgrind", "--leak-check=full", f"--suppressions={supp}", "--error-exitcode=3",
                    program, SAMPLE, corrupt, tmp_path / "scratch.mp4"], timeout=600)
    err = proc.stderr.decode()
    assert "definitely lost: 0 bytes" in err or "no leaks are possible" in err, err[-3000:]
    assert "Invalid read" not in err and "Invalid write" not in err, err[-5000:]
    assert re.search(r"\d+ passed, 0 failed", proc.stdout.decode()), proc.stdout.decode()[-2000:]


@pytest.mark.parametrize("where", ["mdat-early", "mdat-late"])
def test_c_sample_decodes_a_cut_file_like_ffmpeg(where, mk_bin, tmp_path):
    """A file cut short inside its sample data (truncation_lib): Samples/c/decode.c takes
    MK_ETRUNCATED as the end with a warning and its output equals ffmpeg's decode of the same
    cut file (NV12 byte-identical, PCM within 1)."""
    import truncation_lib as cut_lib
    program = _build(DECODE_C, tmp_path / "decode", _libdir(mk_bin))
    src = tmp_path / "source.mp4"
    cut_lib.make_source("mp4_faststart", src)
    cut = cut_lib.cut_copy(src, "mp4_faststart", where, tmp_path / "cut.mp4")
    _compare_decode(program, cut, tmp_path)
    proc = lib.run([program, cut, "-", tmp_path / "again.pcm"])
    assert b"warning:" in proc.stderr and b"truncated at offset" in proc.stderr, lib.tail(proc.stderr)


@pytest.mark.parametrize("name", SHARED_DECODE)
def test_c_sample_decodes_like_ffmpeg(name, mk_bin, shared_media, tmp_path):
    """Samples/c/decode.c, through the C API only, on real files: NV12 byte-identical, PCM within 1."""
    program = _build(DECODE_C, tmp_path / "decode", _libdir(mk_bin))
    _compare_decode(program, shared_media / name, tmp_path)


def test_install_and_pkg_config(mk_bin, shared_media, tmp_path):
    """`make install PREFIX=DIR FROM=MK_BIN` (the build under test, not another one), then
    `cc decode.c $(pkg-config --cflags --libs mediakit)`: the installed library finds the
    installed plugins and decodes like ffmpeg."""
    prefix = tmp_path / "prefix"
    proc = lib.run(["make", "-C", lib.REPO, "install", f"PREFIX={prefix}", f"FROM={mk_bin}"], timeout=900)
    assert proc.returncode == 0, lib.tail(proc.stdout + proc.stderr)
    assert (prefix / "lib" / "mediakit" / "plugins" / "libMediaKitPluginFFmpeg.so").is_file()
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"), MEDIAKIT_NO_DEFAULT_PLUGINS="")
    env.pop("MEDIAKIT_PLUGIN_PATH", None)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "mediakit"], env=env, capture_output=True, text=True)
    assert flags.returncode == 0, flags.stderr
    program = tmp_path / "decode"
    build = subprocess.run(f"cc -std=c99 -Wall -Wextra -Werror {DECODE_C} {flags.stdout.strip()} -o {program}",
                           shell=True, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    _compare_decode(program, shared_media / SHARED_DECODE[0], tmp_path, env=env)
    remux = tmp_path / "remux"
    build = subprocess.run(f"cc -std=c99 -Wall -Wextra -Werror {REMUX_C} {flags.stdout.strip()} -o {remux}",
                           shell=True, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    for layout in ("progressive", "faststart", "fragmented", "hybrid"):
        src, out = shared_media / SHARED_DECODE[0], tmp_path / f"out-{layout}.mp4"
        proc = lib.run([remux, src, out, layout], env=env)
        lib.check_ok(proc, [remux, src, out, layout], who="remux.c")
        assert _framemd5(out) == _framemd5(src), f"{layout}: the remuxed streams differ (framemd5)"


def _framemd5(path: Path) -> list[str]:
    proc = lib.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    return [l for l in proc.stdout.decode().splitlines() if not l.startswith("#software")]


ANNEXB_C = lib.REPO / "Tests" / "c" / "annexb_decode.c"


def _annexb_sources(tmp_path: Path) -> list[Path]:
    """Raw H.264 streams: the bundled sample's (B-frames, copied out of MP4 with
    h264_mp4toannexb) and a libx264 one with 4 slices per picture and access unit delimiters."""
    copied = tmp_path / "sample.h264"
    proc = lib.run(["ffmpeg", "-v", "error", "-y", "-i", SAMPLE, "-map", "0:v:0", "-c", "copy",
                    "-bsf:v", "h264_mp4toannexb", "-f", "h264", copied])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    sliced = tmp_path / "sliced.h264"
    proc = lib.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-frames:v", "60",
                    "-c:v", "libx264", "-bf", "3", "-x264-params", "slices=4:aud=1", "-pix_fmt", "yuv420p", "-f", "h264", sliced])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    return [copied, sliced]


def test_c_decodes_its_own_annexb_packets_like_ffmpeg(mk_bin, tmp_path):
    """Tests/c/annexb_decode.c parses an Annex B stream itself (access units, avcC built by
    hand), decodes through mk_decode_session_open_params + mk_packet_create: its I420 frames are
    byte-identical to `ffmpeg -f h264 -i IN -fps_mode passthrough -f rawvideo -pix_fmt yuv420p`."""
    program = _build(ANNEXB_C, tmp_path / "annexb_decode", _libdir(mk_bin))
    for stream in _annexb_sources(tmp_path):
        out = tmp_path / (stream.stem + ".yuv")
        proc = lib.run([program, stream, out])
        lib.check_ok(proc, [program, stream, out], who="annexb_decode")
        ref = lib.run(["ffmpeg", "-v", "error", "-f", "h264", "-i", stream, "-fps_mode", "passthrough",
                       "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        assert ref.returncode == 0, lib.tail(ref.stderr)
        ours = out.read_bytes()
        assert ref.stdout, f"{stream.name}: ffmpeg decoded nothing"
        assert len(ours) == len(ref.stdout), f"{stream.name}: {len(ours)} bytes of I420, ffmpeg's {len(ref.stdout)}"
        assert ours == ref.stdout, f"{stream.name}: the I420 frames differ from ffmpeg's"


def test_decoder_from_params_misuse(mk_bin, tmp_path):
    """mk_decode_session_open_params / mk_packet_create refuse bad arguments with MK_EINVAL or
    MK_ENOTFOUND and a message naming the field."""
    src = tmp_path / "misuse.c"
    src.write_text(r'''
#include <mediakit/mediakit.h>
#include <stdio.h>
#include <string.h>
static int fails = 0;
#define EXPECT(call, want) do { mk_status s_ = (call); if (s_ != (want)) { printf("FAIL %s: %d\n", #call, s_); fails++; } \
    else if (s_ != MK_OK && !strlen(mk_last_error())) { printf("FAIL %s: no message\n", #call); fails++; } } while (0)
int main(void) {
    mk_decode_session *dec = NULL;
    mk_packet *pkt = NULL;
    mk_codec_params p;
    mk_codec_params_default(&p);
    EXPECT(mk_decode_session_open_params(NULL, &p, NULL), MK_EINVAL);
    EXPECT(mk_decode_session_open_params(&dec, NULL, NULL), MK_EINVAL);
    EXPECT(mk_decode_session_open_params(&dec, &p, NULL), MK_EINVAL);           /* no media type */
    p.media_type = MK_MEDIA_VIDEO;
    EXPECT(mk_decode_session_open_params(&dec, &p, NULL), MK_EINVAL);           /* no codec */
    p.codec = "no-such-codec";
    EXPECT(mk_decode_session_open_params(&dec, &p, NULL), MK_ENOTFOUND);
    p.codec = "h264";
    p.extradata_size = 10;
    EXPECT(mk_decode_session_open_params(&dec, &p, NULL), MK_EINVAL);           /* NULL extradata with a size */
    p.extradata_size = 0;
    p.time_base_den = 0;
    EXPECT(mk_decode_session_open_params(&dec, &p, NULL), MK_EINVAL);
    p.time_base_den = 90000;
    p.struct_size = 4;
    EXPECT(mk_decode_session_open_params(&dec, &p, NULL), MK_EINVAL);
    p.struct_size = sizeof p;
    EXPECT(mk_decode_session_open_params(&dec, &p, NULL), MK_OK);
    mk_packet_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    EXPECT(mk_packet_create(NULL, &i), MK_EINVAL);
    EXPECT(mk_packet_create(&pkt, NULL), MK_EINVAL);
    i.size = 5;
    EXPECT(mk_packet_create(&pkt, &i), MK_EINVAL);                       /* NULL data with a size */
    static const uint8_t junk[8] = {0, 0, 0, 4, 0x65, 0x88, 0x84, 0x00};
    i.data = junk;
    i.size = sizeof junk;
    EXPECT(mk_packet_create(&pkt, &i), MK_OK);
    mk_status st = mk_decode_session_send_packet(dec, pkt);                    /* junk: an error or taken, never a crash */
    if (st != MK_OK && st != MK_EDATA && st != MK_EAGAIN) { printf("FAIL send junk: %d\n", st); fails++; }
    mk_packet_free(&pkt);
    mk_decode_session_close(&dec);
    printf("%d failed\n", fails);
    return fails != 0;
}
''')
    program = _build(src, tmp_path / "misuse", _libdir(mk_bin))
    proc = lib.run([program])
    assert proc.returncode == 0, proc.stdout.decode()[-3000:]


AUDIO_C = lib.REPO / "Tests" / "c" / "audio_convert.c"


def test_c_audio_converter_equals_swift(mk_bin, shared_media, tmp_path):
    """Tests/c/audio_convert.c: a decoded AAC track converted to 48 kHz mono f32 through
    mk_audio_converter_open_track equals the Swift result (`mk-decode --sample-rate 48000
    --channels mono --sample-format f32`), byte for byte; raw s16 stereo 44.1 kHz converted to
    f32 48 kHz, pushed and pulled in pieces of 1, 7 and 4096 frames, equals `mk-audioconv`'s, also
    when the input callback answers "no data now" (MK_EAGAIN) every other call (issue 35, item 5);
    the track pulled through mk_audio_converter_fill_packets, starved so too, equals the pushed
    track byte for byte, and so does the track read by mk_audio_converter_fill_demuxer (whole,
    and after a skip of 12345 frames: the same bytes from there)."""
    program = _build(AUDIO_C, tmp_path / "audio_convert", _libdir(mk_bin))
    media = shared_media / SHARED_DECODE[0]
    ours, swift = tmp_path / "c.f32", tmp_path / "swift.f32"
    proc = lib.run([program, "track", media, ours])
    lib.check_ok(proc, [program, "track", media, ours], who="audio_convert")
    proc = lib.run([mk_bin / "mk-decode", media, "--audio-out", swift, "--sample-rate", "48000", "--channels", "mono",
                    "--sample-format", "f32"])
    lib.check_ok(proc, ["mk-decode", media], who="mk-decode")
    assert swift.stat().st_size > 100_000, "mk-decode wrote too little"
    assert ours.read_bytes() == swift.read_bytes(), "the C converter's f32 differs from the Swift pipeline's"
    pulled = tmp_path / "pulled.f32"
    proc = lib.run([program, "track-pull", media, pulled])
    lib.check_ok(proc, [program, "track-pull", media, pulled], who="audio_convert")
    assert pulled.read_bytes() == swift.read_bytes(), "the track pulled with interruptions differs from the pushed track"
    # mk_audio_converter_fill_demuxer: the library reads the packets; from the start, and after
    # a skip of 12345 frames (mono f32: 4 bytes a frame).
    for skip in (0, 12345):
        read = tmp_path / f"read-{skip}.f32"
        proc = lib.run([program, "track-demuxer", str(skip), media, read])
        lib.check_ok(proc, [program, "track-demuxer", str(skip), media, read], who="audio_convert")
        same = read.read_bytes() == swift.read_bytes()[skip * 4:]        # (not in the assert: pytest would diff megabytes)
        assert same, f"the track read by the library from frame {skip} differs"

    pcm = tmp_path / "in.s16"
    proc = lib.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=997:sample_rate=44100:duration=2",
                    "-ac", "2", "-f", "s16le", pcm])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    ref = tmp_path / "ref.f32"
    proc = lib.run([mk_bin / "mk-audioconv", pcm, ref, "--in-format", "s16", "--in-rate", "44100", "--in-channels", "2",
                    "--sample-format", "f32", "--sample-rate", "48000"])
    lib.check_ok(proc, ["mk-audioconv"], who="mk-audioconv")
    expected = ref.read_bytes()
    assert len(expected) == round(88200 * 48000 / 44100) * 8
    for mode in ("push", "pull", "starved"):
        for chunk in ("1", "7", "4096"):
            out = tmp_path / f"{mode}-{chunk}.f32"
            proc = lib.run([program, mode, chunk, pcm, out])
            lib.check_ok(proc, [program, mode, chunk], who="audio_convert")
            assert out.read_bytes() == expected, f"{mode} in pieces of {chunk}: differs from mk-audioconv's"


def test_c_audio_converter_fill_keeps_frames_waiting_from_a_push(mk_bin, tmp_path):
    """Regression (issue 35, item 5): 500 frames pushed and waiting, then mk_audio_converter_fill
    whose input callback fails (or has no data now): the 500 frames come out of the fill (with
    MK_EFAIL / MK_EAGAIN), equal to what a read of the push gives (the oracle: the same input
    through another converter, pushed and read), at the same rate and resampling; the stream then
    goes on, the rest pulled equal to the rest pushed. Before the fix, 0 frames came back."""
    program = _build(AUDIO_C, tmp_path / "audio_convert", _libdir(mk_bin))
    proc = lib.run([program, "kept"])
    assert proc.returncode == 0 and "0 failed" in proc.stdout.decode(), proc.stdout.decode() + lib.tail(proc.stderr)


def test_c_audio_converter_misuse(mk_bin, tmp_path):
    """Bad formats and calls are errors with a message: zero rate, zero channels, unknown
    sample format, a mask that names another channel count, packets to a PCM converter."""
    src = tmp_path / "misuse.c"
    src.write_text(r'''
#include <mediakit/mediakit.h>
#include <stdio.h>
#include <string.h>
static int fails = 0;
#define EXPECT(call, want) do { mk_status s_ = (call); if (s_ != (want)) { printf("FAIL %s: %d\n", #call, s_); fails++; } \
    else if (s_ != MK_OK && s_ != MK_EAGAIN && s_ != MK_EOF && !strlen(mk_last_error())) { printf("FAIL %s: no message\n", #call); fails++; } } while (0)
int main(void) {
    mk_audio_converter *c = NULL;
    mk_audio_format a = {sizeof a, MK_SAMPLES_S16, 44100, 2, 0}, b = a;
    EXPECT(mk_audio_converter_open(NULL, &a, &b, NULL), MK_EINVAL);
    EXPECT(mk_audio_converter_open(&c, NULL, &b, NULL), MK_EINVAL);
    b.sample_rate = 0;
    EXPECT(mk_audio_converter_open(&c, &a, &b, NULL), MK_EINVAL);
    b.sample_rate = 48000; b.channels = 0;
    EXPECT(mk_audio_converter_open(&c, &a, &b, NULL), MK_EINVAL);
    b.channels = 2; b.sample_format = 99;
    EXPECT(mk_audio_converter_open(&c, &a, &b, NULL), MK_EINVAL);
    b.sample_format = MK_SAMPLES_F32P; b.channel_mask = 0x3F;            /* 5.1's mask, 2 channels */
    EXPECT(mk_audio_converter_open(&c, &a, &b, NULL), MK_EINVAL);
    b.channel_mask = 0;
    mk_audio_converter_settings s;
    mk_audio_converter_default_settings(&s);
    s.quality = 7;
    EXPECT(mk_audio_converter_open(&c, &a, &b, &s), MK_EINVAL);
    EXPECT(mk_audio_converter_open(&c, &a, &b, NULL), MK_OK);
    EXPECT(mk_audio_converter_push_packet(c, NULL), MK_EINVAL);          /* a PCM converter */
    EXPECT(mk_audio_converter_push(c, NULL, 10), MK_EINVAL);
    int32_t n = -1;
    EXPECT(mk_audio_converter_fill_demuxer(c, NULL, NULL, 0, &n), MK_EINVAL);   /* a PCM converter */
    EXPECT(mk_audio_converter_fill_demuxer(NULL, NULL, NULL, 0, &n), MK_EINVAL);
    float l[64], r[64];
    void *planes[2] = {l, r};
    EXPECT(mk_audio_converter_read(c, planes, 64, &n), MK_EAGAIN);
    short in[200] = {0};
    const void *ip[1] = {in};
    EXPECT(mk_audio_converter_push(c, ip, 100), MK_OK);
    EXPECT(mk_audio_converter_flush(c), MK_OK);
    EXPECT(mk_audio_converter_push(c, ip, 100), MK_ESTATE);
    int32_t total = 0;
    while (mk_audio_converter_read(c, planes, 64, &n) == MK_OK) total += n;
    if (total != 109) { printf("FAIL 100 frames at 44.1 kHz gave %d at 48 kHz, not 109\n", total); fails++; }
    EXPECT(mk_audio_converter_read(c, planes, 64, &n), MK_EOF);
    mk_audio_converter_close(&c);
    mk_audio_converter_close(&c);
    EXPECT(mk_audio_converter_flush(NULL), MK_EINVAL);
    printf("%d failed\n", fails);
    return fails != 0;
}
''')
    program = _build(src, tmp_path / "misuse", _libdir(mk_bin))
    proc = lib.run([program])
    assert proc.returncode == 0, proc.stdout.decode()[-3000:]


SESSION_C = lib.REPO / "Tests" / "c" / "session_test.c"


def _build_session_test(tmp_path: Path, libdir: Path) -> Path:
    out = tmp_path / "session_test"
    _cc(["-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-pthread", "-I", INCLUDE, SESSION_C,
         "-L", libdir, "-lmediakit", f"-Wl,-rpath,{libdir}", "-o", out], "building session_test.c")
    return out


def test_session_c_api(mk_bin, tmp_path):
    """Tests/c/session_test.c: mk_async_decode_session_* (pull and callbacks on the library's thread, mid-stream
    flush with completion, seek, close with frames in flight, misuse) against the synchronous
    mk_decode_session over the same file."""
    program = _build_session_test(tmp_path, _libdir(mk_bin))
    proc = lib.run([program, SAMPLE])
    out = proc.stdout.decode()
    assert proc.returncode == 0 and re.search(r"^\d+ passed, 0 failed$", out, re.M), out[-3000:] + lib.tail(proc.stderr)


OLD_SESSION_NAMES = ["mk_session_default_settings", "mk_session_open", "mk_session_start", "mk_session_read_frame",
                     "mk_session_seek", "mk_session_flush", "mk_session_get_stats", "mk_session_get_recovery",
                     "mk_session_close"]
OLD_DECODER_NAMES = ["mk_decoder_default_settings", "mk_decoder_open", "mk_decoder_open_params", "mk_decoder_close",
                     "mk_decoder_send_packet", "mk_decoder_receive_frame", "mk_decoder_reset", "mk_decoder_seek",
                     "mk_decoder_frame_index", "mk_decoder_set_frame_index", "mk_decoder_frames_at",
                     "mk_decoder_frames_at_pts", "mk_decoder_estimate_frames"]


def _build_with_old_names(source: Path, new: str, old: str, old_names: list[str], tmp_path: Path, libdir: Path) -> Path:
    """`source` rewritten with the names before 0.2 (`new` prefix -> `old`): it warns at each use,
    naming the new name (MK_DEPRECATED), and -DMK_NO_DEPRECATION_WARNINGS silences that; built
    with the warning allowed, it links against the old symbols (nm -u), which libmediakit still
    exports beside the new ones."""
    text = source.read_text().replace(new, old)
    assert new not in text and old in text
    program = tmp_path / f"{source.stem}_old"
    src = tmp_path / f"{source.stem}_old.c"
    src.write_text(text)
    base = ["-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-pthread", "-I", INCLUDE, src]
    proc = lib.run(["cc", "-Werror"] + base + ["-c", "-o", tmp_path / "old.o"])
    err = proc.stderr.decode()
    assert proc.returncode != 0 and f"renamed {new}_open" in err, err[-3000:]
    _cc(["-Werror", "-DMK_NO_DEPRECATION_WARNINGS"] + base + ["-c", "-o", tmp_path / "old.o"], "building it quietly")
    _cc(["-Wno-error=deprecated-declarations"] + base + ["-L", libdir, "-lmediakit", f"-Wl,-rpath,{libdir}", "-o", program],
        f"building {source.name} with the old names")
    undefined = lib.run(["nm", "-u", program]).stdout.decode()
    called = [n for n in old_names if re.search(rf"\b{n}\(", text)]
    assert called, f"{source.name} calls none of {old_names}"
    for name in called:
        assert re.search(rf"\b{name}\b", undefined), f"{name} is not what the program calls"
    assert new not in undefined
    exported = lib.run(["nm", "-D", "--defined-only", libdir / "libmediakit.so"]).stdout.decode()
    for name in old_names + [n.replace(old, new) for n in old_names]:
        assert re.search(rf" T {name}$", exported, re.M), f"libmediakit.so does not export {name}"
    return program


def test_session_c_api_under_the_names_before_0_2(mk_bin, tmp_path):
    """The names before 0.2 (mk_session_*, renamed mk_async_decode_session_* so that one name means
    one thing in Swift, C and Python) still work for one release: session_test.c written with
    them (see _build_with_old_names) passes the same checks."""
    program = _build_with_old_names(SESSION_C, "mk_async_decode_session", "mk_session", OLD_SESSION_NAMES, tmp_path,
                                    _libdir(mk_bin))
    proc = lib.run([program, SAMPLE])
    out = proc.stdout.decode()
    assert proc.returncode == 0 and re.search(r"^\d+ passed, 0 failed$", out, re.M), out[-3000:] + lib.tail(proc.stderr)


def test_decoder_c_api_under_the_names_before_0_2(mk_bin, shared_media, tmp_path):
    """mk_decoder_* (renamed mk_decode_session_*, Swift's DecodeSession, in 0.2) still works for one
    release: Samples/c/decode.c written with them (see _build_with_old_names) decodes a real file
    as ffmpeg does (NV12 byte-identical, PCM within 1)."""
    program = _build_with_old_names(DECODE_C, "mk_decode_session", "mk_decoder", OLD_DECODER_NAMES, tmp_path,
                                    _libdir(mk_bin))
    _compare_decode(program, shared_media / SHARED_DECODE[0], tmp_path)


def test_session_c_api_under_valgrind(mk_bin, tmp_path):
    """The same program under valgrind: "definitely lost: 0 bytes", no invalid read or write, with
    frames crossing from the session's thread to the caller's and to the callbacks' thread."""
    if not shutil.which("valgrind"):
        pytest.fail("valgrind is missing: scripts/deps.sh installs it", pytrace=False)
    libdir = _stripped_libdir(mk_bin, tmp_path)
    program = _build_session_test(tmp_path, libdir)
    supp = lib.REPO / "Tests" / "c" / "valgrind.supp"
    proc = lib.run(["valgrind", "--leak-check=full", f"--suppressions={supp}", "--error-exitcode=3", program, SAMPLE],
                   timeout=900)
    err = proc.stderr.decode()
    assert "definitely lost: 0 bytes" in err or "no leaks are possible" in err, err[-3000:]
    assert "Invalid read" not in err and "Invalid write" not in err, err[-5000:]
    assert re.search(r"\d+ passed, 0 failed", proc.stdout.decode()), proc.stdout.decode()[-2000:]


POOL_C = lib.REPO / "Tests" / "c" / "frame_pool_alloc.c"
POOL_CASES = [
    pytest.param("repo:Samples/media/sample.mp4", 0, id="h264-nv12"),
    pytest.param("repo:Samples/media/sample.mp4", 1, id="aac-s16"),
    pytest.param("shared:mp4_av1_10bit_hdr10_aac_720x1280.mp4", 0, id="av1-10bit-converted-nv12"),
    pytest.param("shared:mp4_av1_10bit_hdr10_aac_720x1280.mp4", 1, id="aac-s16-2"),
]


@pytest.mark.parametrize("where,track", POOL_CASES)
def test_steady_state_decoding_allocates_no_frame_buffers(where, track, mk_bin, shared_media, tmp_path):
    """Tests/c/frame_pool_alloc.c: decode a track and mk_frame_pack every frame (NV12 / s16) into
    one reused buffer, counting heap blocks of at least half a packed frame allocated after 30
    frames (the decoders' and the converter's pools fill up in the first ~20 with frame
    threading): none. A 10-bit AV1 picture goes through the FFmpeg plugin's converter
    (libswscale), whose pictures come from its pool once released."""
    kind, name = where.split(":", 1)
    media = lib.REPO / name if kind == "repo" else shared_media / name
    program = tmp_path / "frame_pool_alloc"
    libdir = _libdir(mk_bin)
    _cc(["-std=c99", "-Wall", "-Wextra", "-Werror", "-I", INCLUDE, POOL_C, "-L", libdir, "-lmediakit",
         f"-Wl,-rpath,{libdir}", "-o", program], "building frame_pool_alloc.c")
    proc = lib.run([program, media, str(track), "30"])
    out = dict(line.split(" ", 1) for line in proc.stdout.decode().splitlines() if " " in line)
    assert proc.returncode == 0 and out.get("status") == "OK", proc.stdout.decode() + lib.tail(proc.stderr)
    assert int(out["frames"]) > 60, out
    assert out["large-allocations"] == "0", \
        f"{name} track {track}: {out['large-allocations']} blocks of >= {int(out['frame-bytes']) // 2} bytes " \
        f"({out['large-bytes']} bytes) allocated after the warm-up, over {out['frames']} frames"

ENCODE_C = lib.REPO / "Tests" / "c" / "encode.c"


def test_c_encoder_flac_is_bit_exact_and_transcode_writes_what_ffprobe_reads(mk_bin, tmp_path):
    """Tests/c/encode.c: raw s16 pushed through mk_encoder (FLAC) in pieces of 1, 1000 and
    48000 frames, written with the encoder's final STREAMINFO, decodes with ffmpeg to the input
    bytes; pulled through mk_encoder_fill with "no data now" every other call, the same bytes; mk_transcode writes an AAC .m4a ffprobe reads as aac at the input's rate and channels; a rate Opus
    refuses is MK_EUNSUPPORTED naming the rates it takes."""
    program = _build(ENCODE_C, tmp_path / "encode", _libdir(mk_bin))
    pcm = tmp_path / "in.s16"
    proc = lib.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=997:sample_rate=48000:duration=2",
                    "-f", "lavfi", "-i", "anoisesrc=c=pink:a=0.1:r=48000:d=2", "-filter_complex", "[0][1]amerge=inputs=2",
                    "-f", "s16le", pcm])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    for chunk in ("1", "1000", "48000"):
        out = tmp_path / f"c{chunk}.flac"
        proc = lib.run([program, "flac", chunk, pcm, out])
        lib.check_ok(proc, [program, "flac", chunk], who="encode")
        decoded = lib.run(["ffmpeg", "-v", "error", "-i", out, "-f", "s16le", "-"])
        assert decoded.returncode == 0 and not decoded.stderr, lib.tail(decoded.stderr)
        assert decoded.stdout == pcm.read_bytes(), f"pieces of {chunk}: ffmpeg's decode differs from the input"
    # The pull model (mk_encoder_fill, issue 35 item 5), starved every other call: the same packets.
    pulled = tmp_path / "pulled.flac"
    proc = lib.run([program, "flac-pull", "1000", pcm, pulled])
    lib.check_ok(proc, [program, "flac-pull", "1000"], who="encode")
    assert pulled.read_bytes() == (tmp_path / "c1000.flac").read_bytes(), "the pulled FLAC differs from the pushed one"
    m4a = tmp_path / "t.m4a"
    proc = lib.run([program, "transcode", SAMPLE, m4a, "-", "96000"])
    lib.check_ok(proc, [program, "transcode"], who="encode")
    info = lib.ffprobe_json(m4a, ignore_editlist=False)["streams"][0]
    src = next(s for s in lib.ffprobe_json(SAMPLE)["streams"] if s["codec_type"] == "audio")
    assert (info["codec_name"], info["sample_rate"], info["channels"]) == ("aac", src["sample_rate"], src["channels"]), info
    proc = lib.run([program, "refuse"])
    out = proc.stdout.decode()
    assert proc.returncode == 0 and "8000, 12000, 16000, 24000" in out and "48000 Hz" in out, out


def test_c_transcode_with_gives_mk_transcodes_output_and_refuses_a_wrong_struct_size(mk_bin, tmp_path):
    """Tests/c/encode.c: mk_transcode_with (issue 29, item 8: copy_video and the progress in
    mk_transcode_settings, apart from the encoder's) writes the same bytes as mk_transcode given
    the same settings in mk_encoder_settings (an MP4 with the video copied, and an .m4a; ffprobe
    reads both as the input's video and AAC at the input's rate and channels), with the progress
    called the same number of times. A struct_size smaller than mk_transcode_settings, and
    copy_video or progress set in the encoder's settings, are MK_EINVAL with a message naming the
    field, and nothing is written."""
    program = _build(ENCODE_C, tmp_path / "encode", _libdir(mk_bin))
    src_streams = lib.ffprobe_json(SAMPLE)["streams"]
    audio = next(s for s in src_streams if s["codec_type"] == "audio")
    video = next(s for s in src_streams if s["codec_type"] == "video")
    for name, copy_video in (("t.mp4", "1"), ("t.m4a", "0")):
        outs = {}
        for mode in ("transcode", "transcode-with"):
            out = tmp_path / f"{mode}-{name}"
            proc = lib.run([program, mode, SAMPLE, out, "-", "96000", copy_video])
            lib.check_ok(proc, [program, mode, name], who="encode")
            outs[mode] = (out.read_bytes(), proc.stdout.decode())
        assert outs["transcode"] == outs["transcode-with"], f"{name}: mk_transcode_with's output or progress differs"
        assert int(outs["transcode"][1].split()[-1]) > 0, outs["transcode"][1]
        streams = lib.ffprobe_json(tmp_path / f"transcode-with-{name}", ignore_editlist=False)["streams"]
        a = next(s for s in streams if s["codec_type"] == "audio")
        assert (a["codec_name"], a["sample_rate"], a["channels"]) == ("aac", audio["sample_rate"], audio["channels"]), a
        videos = [(s["codec_name"], s["width"], s["height"]) for s in streams if s["codec_type"] == "video"]
        assert videos == ([(video["codec_name"], video["width"], video["height"])] if copy_video == "1" else []), videos
    refused = tmp_path / "refused.m4a"
    proc = lib.run([program, "refuse-transcode", SAMPLE, refused])
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + lib.tail(proc.stderr)
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert "mk_transcode_settings.struct_size is" in lines["short-size"] and "MK_EINVAL" in lines["short-size"], out
    assert "mk_transcode_settings.struct_size is 0" in lines["zero-size"], out
    assert "mk_encoder_settings.copy_video" in lines["encoder-copy-video"], out
    assert "mk_encoder_settings.progress" in lines["encoder-progress"], out
    assert not refused.exists()


ASSET_STATUS_C = lib.REPO / "Tests" / "c" / "asset_status.c"


def _ffprobe_packet_counts(path: Path) -> list[int]:
    proc = lib.run(["ffprobe", "-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    return [int(x) for x in proc.stdout.decode().split()]


def test_c_reader_and_writer_status(mk_bin, shared_media, tmp_path):
    """Tests/c/asset_status.c (issue 35, item 10): a demuxer's status goes unknown -> reading ->
    completed (each track read to MK_EOF ends it, the two tracks read to their ends as many
    packets as ffprobe -count_packets counts), a seek reads again, cancel makes later reads
    MK_EOF, a cut file completes at MK_ETRUNCATED, an I/O error mid-file (an mk_io that fails past
    half) fails it with MK_EIO and the message; a muxer goes unknown -> writing -> completed, a
    track marked finished refuses packets with MK_ESTATE (the file written holds 20 packets of it,
    as ffprobe counts), cancel cancels."""
    program = _build(ASSET_STATUS_C, tmp_path / "asset_status", _libdir(mk_bin))
    media, cut, out = shared_media / SHARED_DECODE[0], shared_media / "ogg_opus_stereo_truncated_10000b_no_eos.opus", tmp_path / "out.mkv"
    proc = lib.run([program, media, cut, out])
    text = proc.stdout.decode()
    assert proc.returncode == 0 and "0 failed" in text, text + lib.tail(proc.stderr)
    counts = [int(n) for n in re.findall(r"^track \d+ packets (\d+)$", text, re.M)]
    assert counts == _ffprobe_packet_counts(media), f"packets read per track {counts}, ffprobe counts {_ffprobe_packet_counts(media)}"
    written = [int(n) for n in re.search(r"^written (\d+) (\d+)$", text, re.M).groups()]
    assert written[1] == 20 and written[0] == counts[0]
    assert _ffprobe_packet_counts(out) == written, "the file written holds other packet counts than were written"
