"""The PyAV names (``container.streams.video[0]``, ``container.demux(stream)``, ``packet.pts``,
``packet.stream``, ``bytes(packet)``, ``frame.to_ndarray()``, ``frame.key_frame``, ``frame.time``,
``stream.type`` / ``frames`` / ``average_rate`` ...) and the fields the 0.2 C structs added
(colour, aspect, matrix, sample entry, packet time base), each against ffprobe's view of the
same file (ORACLES.md). The later fields also prove that the ctypes structs lie as the C ones do:
a field read at a wrong offset would not match ffprobe."""
from __future__ import annotations

import hashlib
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mediakit

from bindings_lib import ffprobe_json

# FFmpeg's names of the ISO/IEC 23091-2 code points (its enums are those numbers).
RANGES = {"unknown": 0, "tv": 1, "pc": 2}
PRIMARIES = {"bt709": 1, "unknown": 2, "bt470m": 4, "bt470bg": 5, "smpte170m": 6, "smpte240m": 7, "film": 8, "bt2020": 9}
TRANSFERS = {"bt709": 1, "unknown": 2, "bt470m": 4, "bt470bg": 5, "smpte170m": 6, "smpte240m": 7, "linear": 8,
             "smpte2084": 16, "arib-std-b67": 18}
SPACES = {"rgb": 0, "bt709": 1, "unknown": 2, "fcc": 4, "bt470bg": 5, "smpte170m": 6, "smpte240m": 7,
          "bt2020nc": 9, "bt2020c": 10}
CHROMA = {"unspecified": 0, "left": 1, "center": 2, "topleft": 3, "top": 4, "bottomleft": 5, "bottom": 6}


def ratio(text: str) -> Fraction:
    """ffprobe's "2:1" / "30000/1001" / "N/A" / "0/0" as a Fraction (0 for none)."""
    if text in ("N/A", "0:1", "0/0", "0:0"):
        return Fraction(0)
    num, den = text.replace(":", "/").split("/")
    return Fraction(int(num), int(den))


def test_streams_and_tracks_like_ffprobe(shared_media: Path) -> None:
    path = shared_media / "mp4_two_aac_5p1_audio_tracks.mp4"
    streams = ffprobe_json(path, "-show_streams")["streams"]
    with mediakit.open(path) as container:
        assert len(container.streams) == len(streams)
        assert [t.index for t in container.streams.audio] == [s["index"] for s in streams if s["codec_type"] == "audio"]
        assert [t.index for t in container.streams.video] == [s["index"] for s in streams if s["codec_type"] == "video"]
        for track, s in zip(container.streams, streams):
            assert (track.type, track.frames) == (s["codec_type"], int(s["nb_frames"]))
            if track.type == "video":
                assert track.average_rate == ratio(s["avg_frame_rate"])


@pytest.mark.parametrize("name", ["mp4_h264_aac_moov_at_start_ctts_8s.mp4", "ogg_opus_stereo_tiny_155b.opus"])
def test_packets_like_ffprobe(name: str, shared_media: Path) -> None:
    """packet.pts / dts / duration / time / time_base / is_keyframe / stream / bytes(packet) for
    every packet, in file order, and container.demux(stream) for one stream."""
    path = shared_media / name
    probe = ffprobe_json(path, "-show_packets", "-show_streams", "-show_data_hash", "MD5")
    time_bases = {s["index"]: ratio(s["time_base"]) for s in probe["streams"]}
    expected = [(p["stream_index"], p.get("pts"), p.get("dts"), p.get("duration", 0), p["flags"].startswith("K"),
                 p["data_hash"], float(p["pts_time"]) if "pts_time" in p else None) for p in probe["packets"]]
    with mediakit.open(path) as container:
        got = []
        for packet in container:
            assert packet.stream is container.tracks[packet.stream_index]
            assert packet.time_base == time_bases[packet.stream_index] == packet.stream.time_base
            got.append((packet.stream_index, packet.pts, packet.dts, packet.duration, packet.is_keyframe,
                        "MD5:" + hashlib.md5(bytes(packet)).hexdigest(), packet.time))
        assert [g[:6] for g in got] == [e[:6] for e in expected]
        assert all(g[6] == pytest.approx(e[6], abs=1e-6) for g, e in zip(got, expected))
        container.seek(0)
        first = container.streams[0]
        assert [p.pts for p in container.demux(first)] == [e[1] for e in expected if e[0] == first.index]


@pytest.mark.parametrize("name", ["mov_h264_aac_quicktime_audio_empty_edit_bt601.mov",
                                  "mp4_av1_10bit_hdr10_aac_720x1280.mp4", "mp4_h264_pasp_sar_2x1.mp4"])
def test_video_frames_like_ffprobe(name: str, shared_media: Path) -> None:
    """frame.key_frame, colour, chroma location, aspect ratio and time of the first pictures,
    and to_ndarray() (PyAV's name) is to_numpy(). MediaKit's timestamps are the media's, as
    stored; FFmpeg's MP4 reader shifts them back by the media time where the edit list starts
    (the B-frame delay), so ffprobe's are compared with that shift added."""
    path = shared_media / name
    # (read_intervals counts packets: read 12 for the first 3 pictures, whatever the reordering)
    frames = ffprobe_json(path, "-select_streams", "v:0", "-show_frames", "-read_intervals", "%+#12")["frames"][:3]
    with mediakit.open(path) as container:
        video = container.streams.video[0]
        starts = [e.media_time for e in video.edits if e.media_time >= 0]
        shift = float(starts[0] * video.time_base) if starts else 0.0
        decoded = container.decode(video=0)
        for want in frames:
            frame = next(decoded)
            assert frame.key_frame == bool(want["key_frame"]) == frame.is_keyframe
            assert frame.time == pytest.approx(float(want["pts_time"]) + shift, abs=1e-6)
            assert frame.color_range == RANGES[want.get("color_range", "unknown")]
            assert frame.color_primaries == PRIMARIES[want.get("color_primaries", "unknown")]
            assert frame.color_transfer == TRANSFERS[want.get("color_transfer", "unknown")]
            assert frame.color_space == SPACES[want.get("color_space", "unknown")]
            assert frame.chroma_location == CHROMA[want.get("chroma_location", "unspecified")]
            assert frame.sample_aspect_ratio == ratio(want.get("sample_aspect_ratio", "N/A"))
            assert np.array_equal(frame.to_ndarray(), frame.to_numpy())
        decoded.close()


def test_audio_frames_like_ffprobe(sample: Path) -> None:
    probe = ffprobe_json(sample, "-select_streams", "a:0", "-show_frames", "-show_streams", "-read_intervals", "%+#8")
    rate = int(probe["streams"][0]["sample_rate"])
    with mediakit.open(sample) as container:
        decoded = container.decode(audio=0, trim="none")
        for want in probe["frames"]:
            frame = next(decoded)
            assert (frame.samples, frame.rate) == (want["nb_samples"], rate)
            assert frame.time == pytest.approx(float(want["pts_time"]), abs=1e-6)
            assert np.array_equal(frame.to_ndarray(), frame.to_numpy())
        decoded.close()


@pytest.mark.parametrize("name", ["mp4_h264_rotation90_matrix.mp4", "mp4_h264_pasp_sar_2x1.mp4",
                                  "mp4_av1_10bit_hdr10_aac_720x1280.mp4"])
def test_track_fields_like_ffprobe_and_the_file(name: str, shared_media: Path) -> None:
    """Track.matrix (ffprobe's display matrix), sample_aspect_ratio and colour (ffprobe's stream),
    sample_entry (the stsd entry, byte for byte in the file), and Track.parameters carrying them."""
    path = shared_media / name
    data = path.read_bytes()
    streams = ffprobe_json(path, "-show_streams")["streams"]
    with mediakit.open(path) as container:
        for track, s in zip(container.tracks, streams):
            entry = track.sample_entry
            assert entry and entry in data and int.from_bytes(entry[:4], "big") == len(entry)
            assert entry[4:8].decode() == track.codec_tag == s["codec_tag_string"]
            params = track.parameters
            assert (params.codec, params.extradata, params.matrix, params.language) == \
                (track.codec, track.extradata, track.matrix, track.language)
            if track.type != "video":
                continue
            matrix = next((sd["displaymatrix"] for sd in s.get("side_data_list", []) if "displaymatrix" in sd), None)
            identity = (0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)
            numbers = [int(v) for line in matrix.strip().splitlines() for v in line.split(":", 1)[1].split()] \
                if matrix else list(identity)
            assert list(track.matrix) == numbers
            # What the container states (pasp, colr boxes in the sample entry); ffprobe's stream
            # values, which also come from the bitstream, when it states them.
            if b"pasp" in entry:
                assert track.sample_aspect_ratio == ratio(s["sample_aspect_ratio"])
            else:
                assert track.sample_aspect_ratio == 0
            colours: dict[str, Any] = {"color_range": RANGES, "color_primaries": PRIMARIES,
                                       "color_transfer": TRANSFERS, "color_space": SPACES}
            for field_name, names in colours.items():
                if b"colr" in entry:
                    assert getattr(track, field_name) == names[s.get(field_name, "unknown")], field_name
                else:
                    assert getattr(track, field_name) == (0 if field_name == "color_range" else 2), field_name
