"""The fields of Swift's Track, Packet and Frame in the C API's mk_track_info, mk_packet_info and
mk_frame_info (issue 18), printed by Tests/c/info_dump.c and compared with outside oracles.

Oracles:
  ffprobe -show_streams    codec tag (MP4 sample entry type), display matrix (side data), stated
                           bit rate, pixel aspect ratio (pasp), colour description (colr),
                           channel layout (WAVE mask), bits per sample and B-frame depth
                           (has_b_frames) where the container states them.
  the file's boxes         the edit list (elst) and movie time scale (mvhd), the sample entry
                           bytes (stsd), encv / enca for encrypted tracks: ISO/IEC 14496-12 read
                           by this file's own walker.
  ffprobe -show_packets    every packet's pts, dts, duration, size, position and key flag
                           (oracle_lib.expected_packets), Ogg Opus pre-skip as skip_samples side data.
  ffprobe -show_frames     key_frame, colour description, chroma location and sample aspect ratio
                           of the first decoded video frames; channel layout of audio frames.
  old structs              each info struct asked for with its 0.1 struct_size leaves the bytes
                           past it untouched (info_dump's "old_structs" line).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

import oracle_lib as lib
from test_capi import _build, _libdir

INFO_DUMP_C = lib.REPO / "Tests" / "c" / "info_dump.c"

FILES = ["mp4_h264_pasp_sar_2x1.mp4", "mov_h264_aac_quicktime_audio_empty_edit_bt601.mov",
         "mp4_h264_aac_matrix_rotate90_and_reflect.mp4", "mp4_h264_aac_cenc_encrypted_progressive.mp4",
         "ogg_opus_stereo_tiny_155b.opus", "mka_opus_5p1.mka", "mp4_h264_b_pyramid_3b_800x640_4s.mp4",
         "fmp4_h264_aac_5p1_rotation_minus90_mfra.mp4", "mp4_h264_aac_elst_video_empty_edit_1s_then_media.mp4"]

# ISO/IEC 23091-2 code points -> ffprobe's names.
PRIMARIES = {1: "bt709", 4: "bt470m", 5: "bt470bg", 6: "smpte170m", 7: "smpte240m", 9: "bt2020", 12: "smpte432"}
TRANSFER = {1: "bt709", 4: "gamma22", 5: "gamma28", 6: "smpte170m", 7: "smpte240m", 8: "linear", 13: "iec61966-2-1",
            14: "bt2020-10", 15: "bt2020-12", 16: "smpte2084", 18: "arib-std-b67"}
SPACE = {0: "gbr", 1: "bt709", 5: "bt470bg", 6: "smpte170m", 7: "smpte240m", 9: "bt2020nc", 10: "bt2020c"}
RANGE = {1: "tv", 2: "pc"}
CHROMA = {1: "left", 2: "center", 3: "topleft", 4: "top", 5: "bottomleft", 6: "bottom"}
# FFmpeg's channel layouts -> WAVE channel masks (libavutil/channel_layout.h).
LAYOUTS = {"mono": 0x4, "stereo": 0x3, "2.1": 0xB, "quad": 0x33, "5.0": 0x37, "5.1": 0x3F, "5.0(side)": 0x607,
           "5.1(side)": 0x60F, "7.1": 0x63F}


@pytest.fixture(scope="module")
def info_dump(mk_bin, tmp_path_factory) -> Path:
    return _build(INFO_DUMP_C, tmp_path_factory.mktemp("info-dump") / "info_dump", _libdir(mk_bin))


def _dump(program: Path, media: Path, frames: int = 3) -> dict[str, list[dict]]:
    cmd = [program, media, frames]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd, who="info_dump")
    out: dict[str, list[dict]] = {"track": [], "packet": [], "frame": [], "old_structs": []}
    for line in proc.stdout.decode().splitlines():
        d = json.loads(line)
        out[d["kind"]].append(d)
    return out


def _traks(path: Path) -> tuple[int, list[dict]]:
    """The movie time scale and, per trak: its edit list, stsd entry bytes and entry type."""
    traks: list[dict] = []
    scale = 0
    with open(path, "rb") as f:
        end = path.stat().st_size
        for moov in (b for b in lib.iter_boxes(f, 0, end) if b[0] == "moov"):
            for _, pos, hs, _ in lib._child(f, moov, "mvhd"):
                f.seek(pos + hs)
                version = f.read(1)[0]
                f.seek(pos + hs + (20 if version == 1 else 12))
                scale = struct.unpack(">I", f.read(4))[0]
            for trak in lib._child(f, moov, "trak"):
                edits: list[list] = []
                for edts in lib._child(f, trak, "edts"):
                    for _, pos, hs, _ in lib._child(f, edts, "elst"):
                        f.seek(pos + hs)
                        version = f.read(1)[0]
                        f.read(3)
                        count = struct.unpack(">I", f.read(4))[0]
                        for _ in range(count):
                            if version == 1:
                                d, t = struct.unpack(">Qq", f.read(16))
                            else:
                                d, t = struct.unpack(">Ii", f.read(8))
                            i, frac = struct.unpack(">hH", f.read(4))
                            edits.append([d, t, i + frac / 65536])
                entry = b""
                for mdia in lib._child(f, trak, "mdia"):
                    for minf in lib._child(f, mdia, "minf"):
                        for stbl in lib._child(f, minf, "stbl"):
                            for _, pos, hs, size in lib._child(f, stbl, "stsd"):
                                first = next(iter(lib.iter_boxes(f, pos + hs + 8, pos + size)), None)
                                if first:
                                    f.seek(first[1])
                                    entry = f.read(first[3])
                traks.append({"edits": edits, "entry": entry})
    return scale, traks


@pytest.mark.parametrize("name", FILES)
def test_track_info_matches_ffprobe_and_the_boxes(name, info_dump, shared_media):
    """mk_track_info's fields against ffprobe's streams and, for MP4, the file's own boxes."""
    media = shared_media / name
    info = _dump(info_dump, media, frames=0)
    streams = lib.track_streams(lib.ffprobe_json(media))
    assert len(info["track"]) == len(streams)
    is_mp4 = media.suffix in (".mp4", ".mov", ".m4a")
    scale, traks = _traks(media) if is_mp4 else (0, [])
    for t, s in zip(info["track"], streams):
        where = f"{name} track {t['index']}"
        matrix = lib.display_matrix_of(s) or [65536, 0, 0, 0, 65536, 0, 0, 0, 1 << 30]
        assert t["matrix"] == matrix, f"{where}: matrix {t['matrix']}, ffprobe's {matrix}"
        if t["bit_rate"]:
            assert str(t["bit_rate"]) == s.get("bit_rate"), f"{where}: bit rate {t['bit_rate']}, ffprobe's {s.get('bit_rate')}"
        if t["sample_aspect"] != "0:1":
            assert t["sample_aspect"] == s.get("sample_aspect_ratio"), f"{where}: aspect {t['sample_aspect']}"
        for key, names, field in ((  "color_primaries", PRIMARIES, "color_primaries"), ("color_transfer", TRANSFER, "color_transfer"),
                                  ("color_space", SPACE, "color_space"), ("color_range", RANGE, "color_range")):
            if t[key] in names:
                assert names[t[key]] == s.get(field), f"{where}: {key} {t[key]}, ffprobe's {s.get(field)}"
        if t["channel_mask"]:
            assert LAYOUTS.get(s.get("channel_layout", "")) == t["channel_mask"], f"{where}: mask {t['channel_mask']:#x}, layout {s.get('channel_layout')}"
        if media.suffix in (".mp4", ".mov", ".m4a", ".mka", ".mkv", ".webm"):   # containers that mark default / forced
            disposition = s.get("disposition", {})
            assert (t["is_default"], t["forced"]) == (disposition.get("default"), disposition.get("forced")), \
                f"{where}: is_default {t['is_default']} forced {t['forced']}, ffprobe's disposition {disposition}"
        if t["media_type"] == 2 and s.get("has_b_frames") is not None and not t["encrypted"]:
            assert t["reorder_depth"] == s["has_b_frames"], f"{where}: reorder depth {t['reorder_depth']}, has_b_frames {s['has_b_frames']}"
        if is_mp4:
            k = traks[t["index"]]
            assert t["movie_time_scale"] == scale
            assert t["edits"] == k["edits"], f"{where}: edits {t['edits']}, elst {k['edits']}"
            assert t["sample_entry_size"] == len(k["entry"])
            kind = k["entry"][4:8].decode("latin-1")
            assert t["encrypted"] == (kind in ("encv", "enca")), f"{where}: encrypted {t['encrypted']}, entry {kind}"
            if t["media_type"] == 2 and len(k["entry"]) >= 84:
                assert t["bits_per_coded_sample"] == struct.unpack(">H", k["entry"][82:84])[0]   # VisualSampleEntry depth
            if t["media_type"] == 1 and len(k["entry"]) >= 28:
                assert t["bits_per_coded_sample"] == struct.unpack(">H", k["entry"][26:28])[0]   # AudioSampleEntry samplesize
    assert info["old_structs"] == [{"kind": "old_structs", "untouched": True}]


def test_wav_channel_mask_bits_block_align_bit_rate(info_dump, tmp_path):
    """A WAVE_FORMAT_EXTENSIBLE 5.1 file of 24-bit PCM: channel mask, bits per sample, block align
    and bit rate as ffprobe states them (block align: channels * bits / 8)."""
    wav = tmp_path / "five.wav"
    cmd = ["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "0.5",
           "-af", "pan=5.1|FL=c0|FR=c0|FC=c0|LFE=c0|BL=c0|BR=c0", "-c:a", "pcm_s24le", wav]
    lib.oracle_ok(lib.run(cmd), cmd)
    (t,) = _dump(info_dump, wav, frames=1)["track"]
    (s,) = lib.ffprobe_json(wav)["streams"]
    assert t["channel_mask"] == LAYOUTS[s["channel_layout"]]
    assert t["bits_per_coded_sample"] == int(s["bits_per_sample"]) == 24
    assert t["block_align"] == 6 * 3
    assert str(t["bit_rate"]) == s["bit_rate"]


@pytest.mark.parametrize("name", ["mp4_h264_aac_moov_at_start_ctts_8s.mp4", "mp4_h264_b_pyramid_3b_800x640_4s.mp4",
                                  "mp4_h264_pasp_sar_2x1.mp4", "ogg_opus_stereo_tiny_155b.opus"])
def test_packet_info_matches_ffprobe(name, info_dump, shared_media):
    """mk_packet_info: track, pts, dts, duration (N/A when the container states none, or 0),
    size, position and key flag as ffprobe -show_packets; the time base is the track's; Ogg
    Opus's pre-skip is the first packet's trim_start, as FFmpeg's skip_samples side data."""
    media = shared_media / name
    info = _dump(info_dump, media, frames=0)
    tracks = info["track"]
    ours = []
    for p in info["packet"]:
        assert p["time_base"] == tracks[p["track"]]["time_base"]
        duration = str(p["duration"]) if p["duration_stated"] and p["duration"] else "N/A"
        ours.append(",".join(map(str, [p["track"], p["pts"], p["dts"], duration, p["size"], p["position"],
                                       "K" if p["key"] else "_"])))
    ref = lib.expected_packets(media)
    if media.suffix == ".opus":
        # FFmpeg's Ogg demuxer states no duration or position per packet; compare the rest.
        ours = [",".join(l.split(",")[:3] + l.split(",")[4:5] + l.split(",")[6:]) for l in ours]
        ref = [",".join(l.split(",")[:3] + l.split(",")[4:5] + l.split(",")[6:]) for l in ref]
        cmd = ["ffprobe", "-v", "error", "-show_entries", "packet_side_data=skip_samples", "-of", "json", media]
        proc = lib.run(cmd)
        lib.oracle_ok(proc, cmd)
        skips = [sd.get("skip_samples", 0) for p in json.loads(proc.stdout)["packets"] for sd in p.get("side_data_list", [])]
        assert info["packet"][0]["trim_start"] == skips[0] == tracks[0]["encoder_delay"]
        assert tracks[0]["trims_on_packets"] == 1
    problem = lib.diff_lines(ours, ref, "C packets", "ffprobe")
    assert problem is None, problem


@pytest.mark.parametrize("name", ["mov_h264_aac_quicktime_audio_empty_edit_bt601.mov", "mp4_h264_pasp_sar_2x1.mp4", "mka_opus_5p1.mka",
                                  "mp4_av1_10bit_hdr10_aac_720x1280.mp4"])
def test_frame_info_matches_ffprobe(name, info_dump, shared_media):
    """mk_frame_info of the first decoded frames: key flag, colour description, chroma location
    and aspect ratio (video), channel mask (audio), as ffprobe -show_frames."""
    media = shared_media / name
    info = _dump(info_dump, media, frames=3)
    tracks = info["track"]
    for track in {f["track"] for f in info["frame"]}:
        ours = [f for f in info["frame"] if f["track"] == track]
        cmd = ["ffprobe", "-v", "error", "-select_streams", str(track), "-read_intervals", "%+#10", "-show_frames", "-of", "json", media]
        proc = lib.run(cmd)
        lib.oracle_ok(proc, cmd)
        ref = json.loads(proc.stdout)["frames"]
        if tracks[track]["media_type"] == 2:
            ref = ref[:len(ours)]
            assert len(ref) == len(ours)
        else:   # the frames the edit list trims differ in count; every frame has the layout
            ref = ref[:1] * len(ours)
        for o, r in zip(ours, ref):
            where = f"{name} track {track} frame pts {o['pts']}"
            if tracks[track]["media_type"] == 2:
                assert o["key"] == r["key_frame"], where
                assert RANGE.get(o["color_range"], "unknown") == r.get("color_range", "unknown"), where
                assert PRIMARIES.get(o["color_primaries"], "unknown") == r.get("color_primaries", "unknown"), where
                assert TRANSFER.get(o["color_transfer"], "unknown") == r.get("color_transfer", "unknown"), where
                assert SPACE.get(o["color_space"], "unknown") == r.get("color_space", "unknown"), where
                assert CHROMA.get(o["chroma_location"], "unspecified") == r.get("chroma_location", "unspecified"), where
                sar = r.get("sample_aspect_ratio", "0:1")
                assert o["sample_aspect"] == (sar if sar != "N/A" else "0:1"), where
            else:
                assert o["channel_mask"] == LAYOUTS.get(r.get("channel_layout", ""), 0), f"{where}: mask {o['channel_mask']:#x}, {r.get('channel_layout')}"
    assert info["old_structs"] == [{"kind": "old_structs", "untouched": True}]
