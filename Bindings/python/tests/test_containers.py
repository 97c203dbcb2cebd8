"""Ogg and IVF through the Python API, with no special case: the same open/DecodeSession calls.
Oracles: ffprobe's packet count, and ffmpeg's decode with the same libraries
(`-c:a libopus` / `-c:v libdav1d`), as ORACLES.md says."""
import io
import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mediakit


def ffprobe_packet_count(path: Path) -> int:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "packet=stream_index", "-of", "csv=p=0", str(path)],
                         check=True, capture_output=True, text=True).stdout
    return len([l for l in out.splitlines() if l.strip()])


def decode_all(path: Path, media_type: str, layout: str) -> list[Any]:
    with mediakit.open(path) as d:
        track = next(t for t in d.tracks if t.media_type == media_type)
        with mediakit.DecodeSession(track) as dec:
            frames = [f.to_numpy(layout) for p in d.packets(track) for f in dec.decode(p)]
            frames += [f.to_numpy(layout) for f in dec.flush()]
    return frames


@pytest.mark.parametrize("name", ["ogg_opus_stereo_tiny_155b.opus", "ogg_vorbis_48k_stereo_bear.ogg", "ivf_av1_320x180_1s.ivf"])
def test_packets_like_ffprobe(name: str, shared_media: Path) -> None:
    path = shared_media / name
    with mediakit.open(path) as d:
        assert sum(1 for _ in d) == ffprobe_packet_count(path)


def test_ogg_opus_decodes_like_ffmpeg_libopus(shared_media: Path) -> None:
    path = shared_media / "ogg_opus_stereo_tiny_155b.opus"
    ours = np.concatenate(decode_all(path, "audio", "s16")).astype(np.int32).ravel()
    ref = np.frombuffer(subprocess.run(["ffmpeg", "-v", "error", "-c:a", "libopus", "-i", str(path), "-f", "s16le", "-"],
                                       check=True, capture_output=True).stdout, "<i2").astype(np.int32)
    assert ours.size == ref.size and int(np.abs(ours - ref).max()) <= 1


def test_ivf_av1_decodes_like_ffmpeg_libdav1d(shared_media: Path) -> None:
    path = shared_media / "ivf_av1_320x180_1s.ivf"
    ours = b"".join(f.tobytes() for f in decode_all(path, "video", "i420"))
    ref = subprocess.run(["ffmpeg", "-v", "error", "-c:v", "libdav1d", "-i", str(path), "-fps_mode", "passthrough",
                          "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"], check=True, capture_output=True).stdout
    assert ours == ref


@pytest.mark.parametrize("name", ["mp4_h264_aac_matrix_rotate90_and_reflect.mp4", "mp4_h264_rotation90_matrix.mp4",
                                  "m4a_heaac_v1_sbr_explicit_sync_ext_8k_core_16k_out.m4a"])
def test_track_facts_like_ffprobe(name: str, shared_media: Path) -> None:
    """Rotation, reflection (the sign of the display matrix's determinant), and the audio rate and
    channels a decoder outputs (HE-AAC: the SBR rate, parametric stereo), as ffprobe reports them."""
    import json
    path = shared_media / name
    info = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_streams", "-of", "json", str(path)],
                                     check=True, capture_output=True, text=True).stdout)
    with mediakit.open(path) as d:
        for t, s in zip(d.tracks, info["streams"]):
            matrix = next((sd["displaymatrix"] for sd in s.get("side_data_list", []) if "displaymatrix" in sd), None)
            m = [int(v) for line in matrix.strip().splitlines() for v in line.split(":", 1)[1].split()] if matrix else None
            assert t.reflected == (m is not None and m[0] * m[4] - m[1] * m[3] < 0)
            rotation = next((sd["rotation"] for sd in s.get("side_data_list", []) if "rotation" in sd), 0)
            assert round(t.rotation) == round(rotation)
            if t.media_type == "audio":
                assert (t.sample_rate, t.channels) == (int(s["sample_rate"]), s["channels"])


class _Unseekable(io.RawIOBase):
    """A pipe-like reader: read once, front to back, in short pieces."""

    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        n = min(len(b), 1000, len(self.data) - self.at)
        b[:n] = self.data[self.at:self.at + n]
        self.at += n
        return n


def _packets(source: mediakit.Source) -> list[tuple[int, int, int, int, bool, bytes]]:
    with mediakit.open(source) as d:
        return [(p.track, p.pts, p.dts, p.duration, p.is_keyframe, bytes(p.data)) for p in d]


@pytest.mark.parametrize("name", ["ogg_vorbis_48k_stereo_bear.ogg", "ivf_av1_320x180_1s.ivf",
                                  "mp4_h264_aac_moov_at_start_ctts_8s.mp4", "mp4_hevc_hvc1_aac_ctts_elst.mp4"])
def test_open_bytes_memoryview_and_file_objects(name: str, shared_media: Path) -> None:
    """A path, bytes, a memoryview, an open file and io.BytesIO give the same packets (the oracle
    is the same file read by path); a stream that cannot seek does too, where the layout allows."""
    path = shared_media / name
    data = path.read_bytes()
    ref = _packets(path)
    assert ref
    assert _packets(data) == ref
    assert _packets(memoryview(data)) == ref
    assert _packets(io.BytesIO(data)) == ref
    with open(path, "rb") as f:
        assert _packets(f) == ref
    stream = io.BufferedReader(_Unseekable(data))
    if name == "mp4_hevc_hvc1_aac_ctts_elst.mp4":   # moov after mdat: needs to seek back
        with pytest.raises(mediakit.MediaError) as e:
            mediakit.open(stream)
        assert e.value.name == "MK_EUNSUPPORTED" and "moov box comes after the media data" in e.value.message
    else:
        assert _packets(stream) == ref


def test_file_object_errors_surface(shared_media: Path) -> None:
    class Broken(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, b: Any) -> int:
            raise OSError("the disk went away")

    with pytest.raises(OSError, match="the disk went away"):
        mediakit.open(io.BufferedReader(Broken()))


@pytest.mark.parametrize("name", ["mp3_mpeg1_44k_stereo_vbr_xing_9s.mp3", "aac_adts_lc_22k_id3_priv_timestamp_hls_packed.aac"])
def test_stream_parser_packets_like_ffprobe(name: str, shared_media: Path) -> None:
    """StreamParser (C mk_stream_parser_*) fed 7-byte pieces gives ffprobe's packets (pos, size)
    and the whole file's events; seek gives an offset the parser accepts with discontinuity."""
    path = shared_media / name
    data = path.read_bytes()
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pos,size",
                          "-of", "csv=p=0", str(path)], check=True, capture_output=True, text=True).stdout
    ref = [(int(l.split(",")[1]), int(l.split(",")[0])) for l in out.splitlines() if l.strip()]
    with mediakit.StreamParser(total_bytes=len(data)) as parser:
        events = []
        for i in range(0, len(data), 7):
            events += parser.push(data[i:i + 7])
        events += parser.finish()
        assert [(e.offset, len(e.data)) for e in events if e.kind == "packet"] == ref
        fmt = next(e for e in events if e.kind == "data_format")
        assert fmt.sample_rate > 0 and fmt.channels > 0
        offset, packet, exact = parser.seek(1.0)
        assert 0 < offset < len(data) and packet > 0
        after = parser.push(data[offset:offset + 65536], discontinuity=True)
        assert any(e.kind == "packet" for e in after)
    with mediakit.StreamParser() as p2:
        with pytest.raises(mediakit.MediaError) as e:
            p2.seek(1.0)
        assert e.value.name == "MK_ESTATE"
    with pytest.raises(mediakit.MediaError):
        parser.push(b"x")   # closed


def test_mpegts_track_added_while_reading_from_a_pipe(tmp_path: Path) -> None:
    """Two of FFmpeg's transport streams joined (H.264 + AAC, then the same with an MP2 stream
    on a new PID, PMT version 1), read from a stream that cannot seek: the MP2 track is not
    known at open and is added while reading, as FFmpeg adds the stream; ``tracks`` then lists
    it with ffprobe's codec and sample rate by the time its first packet comes, and the
    packets are those of the same file read by path (whose opening looks ahead for it)."""
    common = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=d=1:s=160x120:r=25"]
    a, b = tmp_path / "a.ts", tmp_path / "b.ts"
    subprocess.run(common + ["-f", "lavfi", "-i", "sine=d=1", "-c:v", "libx264", "-c:a", "aac", "-f", "mpegts", str(a)], check=True)
    subprocess.run(common + ["-f", "lavfi", "-i", "sine=d=1:f=880", "-f", "lavfi", "-i", "sine=d=1:f=220:r=32000", "-map", "0",
                             "-map", "1", "-map", "2", "-c:v", "libx264", "-c:a:0", "aac", "-c:a:1", "mp2", "-tables_version", "1",
                             "-f", "mpegts", str(b)], check=True)
    path = tmp_path / "joined.ts"
    path.write_bytes(a.read_bytes() + b.read_bytes())
    probe = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_streams", "-of", "json", str(path)],
                                      check=True, capture_output=True, text=True).stdout)["streams"]
    assert [s["codec_name"] for s in probe] == ["h264", "aac", "mp2"]
    ref = _packets(path)
    with mediakit.open(io.BufferedReader(_Unseekable(path.read_bytes()))) as d:
        assert [t.codec for t in d.tracks] == ["h264", "aac"]
        ours: list[tuple[int, int, int, int, bool, bytes]] = []
        for p in d:
            if p.track == 2 and not any(q[0] == 2 for q in ours):
                assert len(d.tracks) == 3 and p.stream is d.tracks[2]
                assert (d.tracks[2].codec, d.tracks[2].sample_rate) == ("mp2", int(probe[2]["sample_rate"]))
                assert d.streams.audio[-1] is d.tracks[2]
            ours.append((p.track, p.pts, p.dts, p.duration, p.is_keyframe, bytes(p.data)))
    assert ours == ref and any(q[0] == 2 for q in ours)
