"""MP3 and ADTS AAC files through AudioStreamParser (mk-probe / mk-decode), on every .mp3 and
.aac file of ../shared/media and on generated ones.

Oracles (ORACLES.md):
- packets: `ffprobe -select_streams a:0 -show_entries packet=pos,size`: every (offset, size)
  equal. Where FFmpeg's own reading differs, the rule is stated and checked another way:
  * FFmpeg's parser hands the bytes after the last frame to the decoder as one more packet
    when they hold no frame; MediaKit hands on a cut frame's bytes the same way, but reports a
    longer run of garbage as damage (so a trailing packet of ffprobe's that starts with no
    sync word is compared as "damage reported at that offset");
  * after an ID3 tag between ADTS frames (HLS timed metadata), FFmpeg reports the tag's
    position as the next frame's: the frame at our offset must start with an ADTS sync word
    and have ffprobe's size;
  * files ffprobe cannot open (a single frame: "Could not seek"): every packet we list must
    start with an MPEG audio sync word and have the size its header gives;
  * free-format MP3 (ffprobe cannot demux it): the decoded PCM must equal the corpus's
    reference decode (mp3_free_format_conformance_he_free.ref_s16le.pcm, minimp3's vectors).
- decoded PCM: `ffmpeg -v error -i FILE -map 0:a:0 -f s16le -`: same length, |diff| <= 1
  (FFmpeg's gapless rules: LAME's delay and padding trimmed). A stream whose sample rate
  changes midway is refused by the raw writer with a clear error (ffmpeg resamples it).
"""
from __future__ import annotations

import array
import json
import subprocess

import pytest

import oracle_lib as lib

FILES = sorted(p.name for p in lib.SHARED_MEDIA.glob("*") if p.suffix in (".mp3", ".aac")) if lib.SHARED_MEDIA.is_dir() else []


def _ffprobe_packets(path) -> tuple[list[tuple[int, int]], str]:
    # Through the oracle cache: test_mk_stream asks it again for every chunking of the file.
    proc = lib.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pos,size",
                    "-of", "csv=p=0", path], timeout=300)
    rows = []
    for line in proc.stdout.decode().splitlines():
        if line.strip():
            size, pos = line.split(",")[:2]
            rows.append((int(pos), int(size)))
    return rows, proc.stderr.decode()


def _ours(mk_probe, path) -> tuple[list[tuple[int, int]], str, int]:
    proc = lib.run([mk_probe, "--packets", path])
    rows = []
    for line in proc.stdout.decode().splitlines():
        f = line.split(",")
        if len(f) == 7:
            rows.append((int(f[5]), int(f[4])))
    return rows, proc.stderr.decode(), proc.returncode


def _mpeg_frame_size(b: bytes) -> int | None:
    """Frame size from an MPEG audio header (ISO/IEC 11172-3 2.4.2.3), written out here from the tables."""
    if len(b) < 4 or b[0] != 0xFF or b[1] & 0xE0 != 0xE0:
        return None
    version, layer = (b[1] >> 3) & 3, 4 - ((b[1] >> 1) & 3)
    bit_index, rate_index, pad = b[2] >> 4, (b[2] >> 2) & 3, (b[2] >> 1) & 1
    if version == 1 or layer == 4 or bit_index in (0, 15) or rate_index == 3:
        return None
    rate = [44100, 48000, 32000][rate_index] // {3: 1, 2: 2, 0: 4}[version]
    v1 = version == 3
    table = {(True, 1): [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
             (True, 2): [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
             (True, 3): [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
             (False, 1): [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]}
    kbps = table.get((v1, layer), [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160])[bit_index]
    if layer == 1:
        return (12 * kbps * 1000 // rate + pad) * 4
    return (72 if (layer == 3 and not v1) else 144) * kbps * 1000 // rate + pad


@pytest.mark.parametrize("name", [n for n in FILES if "free_format" not in n])   # see test_free_format_...
def test_packets_equal_ffprobe(name, shared_media, mk_probe):
    path = shared_media / name
    ours, our_err, status = _ours(mk_probe, path)
    check_packets_like_ffprobe(path, ours, our_err)


def check_packets_like_ffprobe(path, ours: list[tuple[int, int]], our_err: str, pushed: bool = False) -> None:
    """`ours` (offset, size per packet, in order) against ffprobe's packets of `path`, by the
    rules of this module's docstring; `our_err` is what our tool wrote to standard error (where
    damage is reported). Shared with test_mk_stream.py: with `pushed`, the bytes went straight
    to the stream parser (no container probing), so a file ffprobe's probing refuses (a lone
    frame before a tag: "End of file") is checked as one it cannot open, frame by frame."""
    name = path.name
    data = path.read_bytes()
    ref, ref_err = _ffprobe_packets(path)
    if not ref and ("Could not seek" in ref_err or pushed):
        # ffprobe cannot open a file of a single frame; check our frames against their headers.
        for offset, size in ours:
            assert _mpeg_frame_size(data[offset:offset + 4]) in (size, None) and data[offset] == 0xFF, (offset, size)
        return
    if not ref:
        assert not ours, f"ffprobe finds no packet in {name} (it says: {ref_err.strip()[:200]}); we list {len(ours)}"
        return
    # FFmpeg hands trailing bytes that hold no frame to the decoder as a packet; a long run of
    # them is damage to MediaKit, reported at that offset.
    if ref and ref[-1] not in ours and data[ref[-1][0]:ref[-1][0] + 2] != b"\xff\xfb" \
            and _mpeg_frame_size(data[ref[-1][0]:ref[-1][0] + 4]) is None and data[ref[-1][0]] != 0xFF:
        assert f"offset {ref[-1][0]}" in our_err or ref[-1][1] < 4096, our_err
        ref = ref[:-1]
    # After an inline ID3 tag (ADTS in HLS timed metadata), FFmpeg's pos lags by the tags'
    # sizes (its first frame after a tag is placed at the tag). Then the sizes must agree, and
    # our offsets must be the frames themselves: each starts with a sync word and the bytes
    # between two packets are nothing or ID3 tags.
    if any(data[pos:pos + 3] == b"ID3" for pos, _ in ref):
        assert [s for _, s in ours][:len(ref)] == [s for _, s in ref]
        for (o1, s1), (o2, _) in zip(ours, ours[1:]):
            gap = data[o1 + s1:o2]
            while gap[:3] == b"ID3":
                gap = gap[10 + ((gap[6] << 21) | (gap[7] << 14) | (gap[8] << 7) | gap[9]):]
            assert gap == b"" and data[o2] == 0xFF, f"bytes between the packets at {o1} and {o2} are not ID3 tags"
        assert len(ours) - len(ref) <= 1 and (len(ours) == len(ref) or ours[-1][0] + ours[-1][1] == len(data))
        return
    assert ours == ref, lib.diff_lines([f"{o},{s}" for o, s in ours], [f"{o},{s}" for o, s in ref], "ours", "ffprobe")


def _pcm(b: bytes) -> array.array:
    a = array.array("h")
    a.frombytes(b[: len(b) // 2 * 2])
    return a


@pytest.mark.parametrize("name", [n for n in FILES if not n.startswith("broken_") and "free_format" not in n])
def test_decodes_like_ffmpeg(name, shared_media, mk_decode, tmp_path):
    path = shared_media / name
    out = tmp_path / "out.pcm"
    proc = lib.run([mk_decode, path, "--audio-out", out, "-q"])
    ref = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-map", "0:a:0", "-f", "s16le", "-"],
                         capture_output=True, timeout=300).stdout
    if "samplerate_change" in name:
        assert proc.returncode == 1 and b"changed from 44100 Hz" in proc.stderr, proc.stderr
        assert not out.exists(), "a failed decode leaves no output under its name"
        return
    lib.check_ok(proc, [mk_decode, path])
    ours = out.read_bytes()
    assert len(ours) == len(ref), f"{name}: {len(ours)} bytes, ffmpeg {len(ref)}"
    a, b = _pcm(ours), _pcm(ref)
    worst = max((abs(x - y) for x, y in zip(a, b)), default=0)
    assert worst <= 1, f"{name}: max |diff| {worst}"


@pytest.mark.parametrize("name", [n for n in FILES if n.endswith(".mp3") and not n.startswith("broken_") and "free_format" not in n])
def test_trim_ffmpeg_decodes_like_ffmpeg(name, shared_media, mk_decode, tmp_path):
    """`--trim ffmpeg` promises FFmpeg 5.1's output: for MP3 its demuxer discards the LAME
    tag's end padding (less the decoder's 529) from the Xing / VBRI frame count on, packet by
    packet. Same length as `ffmpeg -i FILE -f s16le -`, |diff| <= 1 (MP3 decodes to float;
    the float-to-s16 rounding may differ by one)."""
    path = shared_media / name
    out = tmp_path / "out.pcm"
    cmd = [mk_decode, path, "--trim", "ffmpeg", "--audio-out", out, "--sample-format", "s16", "-q"]
    proc = lib.run(cmd)
    ref = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-map", "0:a:0", "-f", "s16le", "-"],
                         capture_output=True, timeout=300)
    assert ref.returncode == 0, ref.stderr.decode()
    if "samplerate_change" in name:   # as test_decodes_like_ffmpeg: raw PCM cannot change rate
        assert proc.returncode == 1 and b"changed from 44100 Hz" in proc.stderr, proc.stderr
        return
    lib.check_ok(proc, cmd)
    channels = json.loads(subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=channels",
                                          "-of", "json", str(path)], capture_output=True, check=True).stdout)["streams"][0]["channels"]
    problem = lib.compare_pcm_s16(out.read_bytes(), ref.stdout, channels, tolerance=1)
    assert problem is None, f"{name}: {problem}"


def _lame_encode_with_crc(path, seconds: float = 1.0, rate: int = 44100) -> bytes:
    """A stereo 128 kbit/s LAME encode with error protection (`lame -p`): every frame, the
    Info frame included, has its protection bit cleared and a CRC after the header, and LAME
    writes the Info tag after the side information as if there were no CRC. Encoded through
    libmp3lame's C API (the library ffmpeg's libmp3lame encoder uses; ffmpeg has no option
    for error protection)."""
    import ctypes
    import math
    lame = ctypes.CDLL("libmp3lame.so.0")
    lame.lame_init.restype = ctypes.c_void_p
    for name in ("lame_set_in_samplerate", "lame_set_num_channels", "lame_set_error_protection", "lame_set_bWriteVbrTag",
                 "lame_set_brate", "lame_set_quality"):
        getattr(lame, name).argtypes = [ctypes.c_void_p, ctypes.c_int]
    lame.lame_init_params.argtypes = [ctypes.c_void_p]
    lame.lame_encode_buffer_interleaved.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    lame.lame_encode_flush.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
    lame.lame_get_lametag_frame.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    lame.lame_get_lametag_frame.restype = ctypes.c_size_t
    lame.lame_close.argtypes = [ctypes.c_void_p]
    g = lame.lame_init()
    for name, value in (("lame_set_in_samplerate", rate), ("lame_set_num_channels", 2), ("lame_set_error_protection", 1),
                        ("lame_set_bWriteVbrTag", 1), ("lame_set_brate", 128), ("lame_set_quality", 5)):
        getattr(lame, name)(g, value)
    assert lame.lame_init_params(g) == 0
    n = int(rate * seconds)
    pcm = array.array("h", [int(8000 * math.sin(2 * math.pi * (440 if i % 2 else 660) * (i // 2) / rate)) for i in range(2 * n)])
    buf = ctypes.create_string_buffer(2 * n + 100000)
    k = lame.lame_encode_buffer_interleaved(g, pcm.buffer_info()[0], n, buf, len(buf))
    assert k >= 0
    out = buf.raw[:k]
    k = lame.lame_encode_flush(g, buf, len(buf))
    assert k >= 0
    out += buf.raw[:k]
    tag = ctypes.create_string_buffer(4096)
    size = lame.lame_get_lametag_frame(g, tag, len(tag))   # the Info frame, written over the first frame's place
    lame.lame_close(g)
    assert 0 < size <= len(out)
    return tag.raw[:size] + out[size:]


@pytest.mark.parametrize("cut", [0, 100], ids=["whole", "first_audio_frame_cut"])
def test_lame_info_frame_with_crc(cut, mk_probe, mk_decode, tmp_path):
    """An MP3 whose frames carry a CRC (issue 28, item 7): FFmpeg reads the Info / LAME tag at
    4 + 32 bytes ignoring the CRC, so the Info frame is no packet and LAME's delay and padding
    are trimmed. With `cut`, the first audio frame after the Info frame loses its last bytes
    (its next header is not where its length says): FFmpeg's demuxer confirms that frame
    against the next header and skips to the first frame that is confirmed.
    Oracles: ffprobe's packets (pts, dts, duration, size, pos), ffmpeg's PCM (|diff| <= 1:
    MP3 decodes to float), for the default trim and `--trim ffmpeg`."""
    data = _lame_encode_with_crc(tmp_path)
    assert data[1] & 1 == 0 and data[36:40] == b"Info", data[:48].hex()   # CRC, the tag after 32 bytes of side information
    info = _mpeg_frame_size(data[:4])
    first = _mpeg_frame_size(data[info:info + 4])
    assert data[info + 1] & 1 == 0   # the audio frames have a CRC too
    if cut:
        data = data[:info + first - cut] + data[info + first:]
    path = tmp_path / "crc.mp3"
    path.write_bytes(data)
    ref_tb = json.loads(subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=time_base",
                                        "-of", "json", str(path)], capture_output=True, check=True).stdout)["streams"][0]["time_base"]
    num, den = (int(v) for v in ref_tb.split("/"))
    proc = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pts,dts,duration,size,pos",
                           "-of", "csv=p=0", str(path)], capture_output=True, check=True)
    # ffprobe: pts,dts,duration,size,pos in 1/14112000 s; ours in samples (1/44100 s)
    ref = []
    for line in proc.stdout.decode().split():
        pts, dts, duration, size, pos = (int(v) for v in line.strip(",").split(",")[:5])
        ref.append((pts * num * 44100 // den, dts * num * 44100 // den, duration * num * 44100 // den, size, pos))
    ours = []
    for line in lib.run([mk_probe, "--packets", path]).stdout.decode().split():
        f = line.split(",")
        ours.append((int(f[1]), int(f[2]), int(f[3]), int(f[4]), int(f[5])))
    assert ref and ref[0][4] == info + (first - cut if cut else 0), ref[:2]   # the oracle skips the Info frame (and the cut one)
    assert ours == ref, lib.diff_lines([str(r) for r in ours], [str(r) for r in ref], "mk-probe", "ffprobe")
    want = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-f", "s16le", "-"], capture_output=True, check=True).stdout
    for trim in ("gapless", "ffmpeg"):
        out = tmp_path / f"{trim}.pcm"
        cmd = [mk_decode, path, "--trim", trim, "--audio-out", out, "--sample-format", "s16", "-q"]
        lib.check_ok(lib.run(cmd), cmd)
        problem = lib.compare_pcm_s16(out.read_bytes(), want, 2, tolerance=1)
        assert problem is None, f"--trim {trim}: {problem}"


def test_free_format_frames_match_the_reference_decode(shared_media, mk_probe):
    """Free-format Layer III (bit rate index 0): frames end where the next header starts.
    ffprobe cannot demux it and libavcodec's decoder refuses free-format frames, so the oracle
    is the corpus's reference decode (minimp3's vectors): as many frames as it has 1152-sample
    frames, each starting with a free-format header (bit rate index 0)."""
    path = shared_media / "mp3_free_format_conformance_he_free.mp3"
    data = path.read_bytes()
    ref = (shared_media / "mp3_free_format_conformance_he_free.ref_s16le.pcm").read_bytes()
    proc = lib.run([mk_probe, "--packets", path])
    lib.check_ok(proc, [mk_probe, "--packets", path])
    # The last frame has no header after it to end it: it is handed on as a cut frame
    # (duration N/A), as the reference decoder leaves it out too.
    rows = [l.split(",") for l in proc.stdout.decode().splitlines() if l.count(",") == 6]
    whole = [(int(r[5]), int(r[4])) for r in rows if r[3] != "N/A"]
    channels = 1 if (data[whole[0][0] + 3] >> 6) == 3 else 2
    assert len(whole) == len(ref) // (2 * channels * 1152), (len(whole), len(ref))
    for offset, _ in whole:
        assert data[offset] == 0xFF and data[offset + 2] >> 4 == 0, f"no free-format header at {offset}"


@pytest.mark.parametrize("name", ["mp3_mpeg1_44k_stereo_vbr_xing_9s.mp3", "mp3_cbr_56k_mono_no_xing.mp3",
                                  "mp3_mpeg2_24k_lame_vbr_v2_xing_38s.mp3", "mp3_vbr_vbri_header_48k_stereo_complete.mp3"])
def test_track_facts_like_ffprobe(name, shared_media, mk_probe):
    path = shared_media / name
    info = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json", str(path)],
                                     capture_output=True, text=True, timeout=300).stdout)
    s = next(x for x in info["streams"] if x["codec_type"] == "audio")
    ours = json.loads(lib.run([mk_probe, "--json", path]).stdout)["tracks"][0]
    assert (ours["codec"], ours["sample_rate"], ours["channels"]) == (s["codec_name"], int(s["sample_rate"]), s["channels"])
    frame = 1152 if s["codec_name"] == "mp3" else 1024
    assert abs(ours["duration"] - float(info["format"]["duration"])) <= frame / int(s["sample_rate"]) + 0.001


def _ffprobe_duration(path) -> float | None:
    """ffprobe's duration of `path` in seconds (None when it reads none). Where FFmpeg says it
    is "Estimating duration from bitrate" (no Xing / VBRI frame count: a guess from the file's
    size and a bit rate, off by a factor of 4 on a VBR file and counting trailing garbage as
    audio), the oracle is the sum of the durations of the packets ffprobe demuxes instead."""
    cmd = ["ffprobe", "-v", "info", "-select_streams", "a:0", "-show_entries", "format=duration", "-of", "json", str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    stated = json.loads(proc.stdout or "{}").get("format", {}).get("duration")
    if stated is None or "Estimating duration from bitrate" not in proc.stderr:
        return float(stated) if stated is not None else None
    cmd = ["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "packet=duration_time", "-of", "csv=p=0", str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    lib.oracle_ok(proc, cmd)
    return sum(float(line.split(",")[0]) for line in proc.stdout.split() if line.split(",")[0] not in ("", "N/A"))


def check_duration_like_ffprobe(path, mk_probe) -> None:
    """mk-probe's duration of `path` within one frame of ffprobe's (see _ffprobe_duration)."""
    ref = _ffprobe_duration(path)
    proc = lib.run([mk_probe, "--json", path])
    if ref is None:
        # ffprobe reads no duration: a file it cannot open (lone frames, no audio). Either we
        # refuse it too, or our duration is the samples of the packets we list (each of which
        # test_packets_equal_ffprobe checks against its header).
        if proc.returncode != 0:
            return
        track = json.loads(proc.stdout)["tracks"][0]
        rows = [l.split(",") for l in lib.run([mk_probe, "--packets", path]).stdout.decode().splitlines() if l.count(",") == 6]
        frame = {"mp1": 384, "mp2": 1152, "aac": 1024}.get(track["codec"], 1152 if track["sample_rate"] >= 32000 else 576)
        whole = [r for r in rows if r[3] != "N/A"]
        assert abs(track["duration"] - len(whole) * frame / track["sample_rate"]) <= 0.001, (track["duration"], len(whole))
        return
    lib.check_ok(proc, [mk_probe, "--json", path])
    track = json.loads(proc.stdout)["tracks"][0]
    frame = {"mp1": 384, "mp2": 1152, "aac": 1024}.get(track["codec"], 1152 if track["sample_rate"] >= 32000 else 576)
    assert abs(track["duration"] - ref) <= frame / track["sample_rate"] + 0.001, (track["duration"], ref)


@pytest.mark.parametrize("name", [n for n in FILES if "free_format" not in n])
def test_duration_like_ffprobe(name, shared_media, mk_probe):
    check_duration_like_ffprobe(shared_media / name, mk_probe)


def test_free_format_duration_is_the_reference_decode(shared_media, mk_probe):
    """Free format: ffprobe reads no duration; the reference decode's length is the oracle
    (within one frame: its last, cut frame is not decoded)."""
    path = shared_media / "mp3_free_format_conformance_he_free.mp3"
    ref = (shared_media / "mp3_free_format_conformance_he_free.ref_s16le.pcm").stat().st_size
    track = json.loads(lib.run([mk_probe, "--json", path]).stdout)["tracks"][0]
    seconds = ref / (2 * track["channels"] * track["sample_rate"])
    assert abs(track["duration"] - seconds) <= 1152 / track["sample_rate"] + 0.001, (track["duration"], seconds)


def _add_adts_crc(data: bytes) -> bytes:
    """The same ADTS stream with protection_absent = 0 and a 16-bit CRC field in every header
    (zeros: FFmpeg checks it only when asked to), frame lengths grown by 2."""
    out, i = bytearray(), 0
    while i + 7 <= len(data):
        length = ((data[i + 3] & 3) << 11) | (data[i + 4] << 3) | (data[i + 5] >> 5)
        h = bytearray(data[i:i + 7])
        h[1] &= 0xFE
        n = length + 2
        h[3] = (h[3] & 0xFC) | (n >> 11)
        h[4] = (n >> 3) & 0xFF
        h[5] = ((n & 7) << 5) | (h[5] & 0x1F)
        out += h + b"\0\0" + data[i + 7:i + length]
        i += length
    return bytes(out)


@pytest.mark.parametrize("kind", ["mp3_cbr", "mp3_vbr", "mp3_mono", "mp3_mpeg2_mono", "mp3_mpeg2_vbr", "mp3_mpeg25",
                                  "mp3_id3_cover", "mp2", "adts", "adts_crc"])
def test_generated_streams(kind, mk_probe, mk_decode, tmp_path):
    """Files ffmpeg makes (CBR, VBR with Xing, MPEG-1 mono, MPEG-2 mono CBR and stereo VBR,
    MPEG-2.5, an ID3v2 tag with cover art, Layer II, ADTS, and ADTS rewritten with CRC
    fields): packets equal ffprobe's, the duration is within one frame of ffprobe's and the
    decode equals ffmpeg's. (VBRI and free format: ffmpeg writes neither; the corpus has one
    of each, checked above.)"""
    src = ["-f", "lavfi", "-i", "sine=frequency=440:duration=3:sample_rate=44100"]
    path = tmp_path / (kind + (".aac" if kind.startswith("adts") else ".mp2" if kind == "mp2" else ".mp3"))
    cover = tmp_path / "cover.png"
    if kind == "mp3_id3_cover":
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48", "-frames:v", "1", cover]
        lib.oracle_ok(lib.run(cmd), cmd)
    args = {"mp3_cbr": ["-c:a", "libmp3lame", "-b:a", "128k"],
            "mp3_vbr": ["-c:a", "libmp3lame", "-q:a", "4"],
            "mp3_mono": ["-ac", "1", "-c:a", "libmp3lame", "-b:a", "64k"],
            "mp3_mpeg2_mono": ["-ar", "22050", "-ac", "1", "-c:a", "libmp3lame", "-b:a", "32k"],
            "mp3_mpeg2_vbr": ["-ar", "24000", "-ac", "2", "-c:a", "libmp3lame", "-q:a", "5"],
            "mp3_mpeg25": ["-ar", "11025", "-ac", "2", "-c:a", "libmp3lame", "-b:a", "24k"],
            "mp3_id3_cover": ["-i", cover, "-map", "0:a", "-map", "1:v", "-c:a", "libmp3lame", "-b:a", "96k", "-c:v", "copy",
                              "-id3v2_version", "3", "-metadata", "title=Sine", "-disposition:v", "attached_pic"],
            "mp2": ["-c:a", "mp2", "-b:a", "192k"],
            "adts": ["-c:a", "aac", "-b:a", "96k", "-f", "adts"],
            "adts_crc": ["-c:a", "aac", "-b:a", "96k", "-f", "adts"]}[kind]
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", *src, *args, path]
    lib.oracle_ok(lib.run(cmd), cmd)
    if kind == "adts_crc":
        path.write_bytes(_add_adts_crc(path.read_bytes()))
    ref, _ = _ffprobe_packets(path)
    assert ref, "ffprobe reads the generated file"
    ours, err, status = _ours(mk_probe, path)
    assert status == 0, err
    assert ours == ref
    check_duration_like_ffprobe(path, mk_probe)
    out = tmp_path / "out.pcm"
    lib.check_ok(lib.run([mk_decode, path, "--audio-out", out, "-q"]), [mk_decode, path])
    r = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-map", "0:a:0", "-f", "s16le", "-"],
                       capture_output=True).stdout
    a, b = _pcm(out.read_bytes()), _pcm(r)
    assert len(a) == len(b) and max((abs(x - y) for x, y in zip(a, b)), default=0) <= 1


@pytest.mark.parametrize("name", [n for n in FILES if n.endswith(".aac")])
def test_adts_duration_counts_the_frames(name, shared_media, mk_probe):
    """ADTS states no length: on a file the duration is the frames' samples (1024 each), counted
    from ffprobe's packet list here (within one frame: FFmpeg may leave out a last, cut one)."""
    path = shared_media / name
    ref, _ = _ffprobe_packets(path)
    info = json.loads(lib.run([mk_probe, "--json", path]).stdout)["tracks"][0]
    assert abs(info["duration_ts"] - len(ref) * 1024) <= 1024, (info["duration_ts"], len(ref))


TAGGED = [n for n in FILES if n.endswith(".mp3") and (lib.SHARED_MEDIA / n).read_bytes()[:3] == b"ID3"]


@pytest.mark.parametrize("name", TAGGED)
def test_tags_like_ffprobe_and_mutagen(name, shared_media, mk_probe, tmp_path):
    """ID3v2 tags: title, artist, album, track, date and genre as ffprobe prints them; the comment,
    chapters (CHAP) and the list of frame ids as mutagen reads them; the cover art's bytes as
    `ffmpeg -an -vcodec copy` writes them."""
    import mutagen.id3
    path = shared_media / name
    proc = lib.run([mk_probe, "--json", path])
    if proc.returncode != 0:
        # Tags and no audio frame (the corpus's "id3v2-only" file): an error naming it, as ffprobe finds no packet.
        assert b"no MPEG audio or ADTS frame" in proc.stderr and not _ffprobe_packets(path)[0], proc.stderr
        return
    probed = json.loads(proc.stdout)
    ours = probed["format"].get("tags", {})
    ff = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format_tags", "-of", "json", str(path)],
                                   capture_output=True, text=True).stdout).get("format", {}).get("tags", {})
    for key in ("title", "artist", "album", "track", "date", "genre", "comment"):
        if key in ff:
            assert ours.get(key) == ff[key], (key, ours.get(key), ff[key])
    try:
        tag = mutagen.id3.ID3(str(path), translate=False, load_v1=False)   # the frames as stored
    except mutagen.id3.ID3NoHeaderError:
        return
    # Every frame stored: the ones mutagen knows and the ones it keeps as unknown.
    ids = {f.FrameID for f in tag.values()} | {bytes(u[:4]).decode("latin-1") for u in tag.unknown_frames}
    assert set(probed["format"].get("id3_frames", [])) == ids, (probed["format"].get("id3_frames"), sorted(ids))
    chapters = tag.getall("CHAP")
    assert [(c["start"], c["end"], c["time_base"]) for c in probed.get("chapters", [])] == \
        sorted((c.start_time, c.end_time, "1/1000") for c in chapters)
    pictures = tag.getall("APIC")
    if pictures:
        cover = tmp_path / "cover"
        lib.check_ok(lib.run([mk_probe, "--cover-out", cover, path]), [mk_probe, "--cover-out", path])
        assert cover.read_bytes() == pictures[0].data
        ref = tmp_path / "ref.bin"
        proc = lib.run(["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-an", "-vcodec", "copy", "-f", "data", ref])
        if proc.returncode == 0 and ref.exists():
            assert cover.read_bytes() == ref.read_bytes()


@pytest.mark.parametrize("name", ["mp3_mpeg1_44k_stereo_vbr_xing_9s.mp3", "mp3_cbr_56k_mono_no_xing.mp3",
                                  "aac_adts_lc_with_id3v2_prefix.aac", "aac_adts_lc_22k_id3_priv_timestamp_hls_packed.aac"])
def test_remux_into_mp4(name, shared_media, mk_bin, mk_decode, tmp_path):
    """`mk-remux FILE out.mp4` for MP3 and ADTS AAC. Oracles: ffmpeg decodes our MP4 to what it
    decodes from its own `-c copy` MP4 of the same file (the same samples and the same gapless
    edit: FFmpeg 5.1 keeps the whole last frame), and mk-decode of our MP4 (gapless) equals
    ffmpeg's decode of the original file."""
    path = shared_media / name
    ours, theirs = tmp_path / "ours.mp4", tmp_path / "theirs.mp4"
    lib.check_ok(lib.run([mk_bin / "mk-remux", path, ours]), [mk_bin / "mk-remux", path, ours])
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:a:0", "-c", "copy", theirs]
    lib.oracle_ok(lib.run(cmd), cmd)

    def pcm(p):
        return subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(p), "-map", "0:a:0", "-f", "s16le", "-"],
                              capture_output=True, timeout=300).stdout
    a, b = _pcm(pcm(ours)), _pcm(pcm(theirs))
    assert len(a) == len(b) and max((abs(x - y) for x, y in zip(a, b)), default=0) <= 1, (len(a), len(b))
    out = tmp_path / "out.pcm"
    lib.check_ok(lib.run([mk_decode, ours, "--audio-out", out, "-q"]), [mk_decode, ours])
    c, d = _pcm(out.read_bytes()), _pcm(pcm(path))
    assert len(c) == len(d) and max((abs(x - y) for x, y in zip(c, d)), default=0) <= 1, (len(c), len(d))
