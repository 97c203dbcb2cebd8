"""Decoding through the Python API against ffmpeg (ORACLES.md): every NV12 array equals
ffmpeg's bytes for that frame (`ffmpeg -v error -i F -map 0:v:0 -fps_mode passthrough
-f rawvideo -pix_fmt nv12 -`), s16 audio within 1 per sample of `-map 0:a:0 -f s16le`
cut where the file says the audio ends (MediaKit is gapless; FFmpeg 5.1 keeps the whole
last AAC frame): the oracle suite's own reading of the edit list, presented_audio_samples."""
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "Tests" / "oracle"))
import oracle_lib  # noqa: E402

import numpy as np
import pytest

import mediakit

Array = np.ndarray[Any, Any]

FILES = ["mp4_h264_aac_moov_at_start_ctts_8s.mp4", "mov_h264_aac_quicktime_audio_empty_edit_bt601.mov",
         "mp4_hevc_hvc1_aac_ctts_elst.mp4", "mp4_h264_b_pyramid_3b_800x640_4s.mp4"]


def ffmpeg(path: Path, *args: str, input_options: Sequence[str] = ()) -> bytes:
    return subprocess.run(["ffmpeg", "-v", "error", *input_options, "-i", str(path), *args, "-"], check=True,
                          capture_output=True).stdout


def decode_track(path: Path, media_type: str, layout: str) -> tuple[mediakit.Track, list[Array]]:
    with mediakit.open(path) as demuxer:
        track = next(t for t in demuxer.tracks if t.media_type == media_type)
        with mediakit.DecodeSession(track) as decoder:
            out: list[Array] = []
            for packet in demuxer.packets(track):
                out += [f.to_numpy(layout) for f in decoder.decode(packet)]
            out += [f.to_numpy(layout) for f in decoder.flush()]
            return track, out


def check_video(path: Path, input_options: Sequence[str] = ()) -> None:
    track, frames = decode_track(path, "video", "nv12")
    ref = ffmpeg(path, "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "nv12",
                 input_options=input_options)
    size = frames[0].nbytes
    assert len(ref) == size * len(frames), f"{len(frames)} frames of {size} bytes, ffmpeg wrote {len(ref)} bytes"
    for i, f in enumerate(frames):
        assert f.shape == (track.height + (track.height + 1) // 2, track.width)
        assert f.tobytes() == ref[i * size:(i + 1) * size], f"frame {i} differs from ffmpeg's"


def reference_pcm(path: Path, channels: int, sample_rate: int) -> Array:
    """ffmpeg's s16 decode of the first audio track, cut where the file says the audio ends."""
    ref = np.frombuffer(ffmpeg(path, "-map", "0:a:0", "-f", "s16le"), dtype="<i2").astype(np.int32)
    presented = oracle_lib.presented_audio_samples(Path(path), sample_rate)
    return ref if presented is None else ref[: min(ref.size, presented * channels)]


def check_audio(path: Path) -> None:
    track, frames = decode_track(path, "audio", "s16")
    ours = np.concatenate(frames).astype(np.int32).ravel()
    ref = reference_pcm(path, track.channels, track.sample_rate)
    assert ours.size == ref.size, f"{ours.size} samples, ffmpeg {ref.size}"
    assert int(np.abs(ours - ref).max(initial=0)) <= 1


def test_sample_video_and_audio(sample: Path) -> None:
    check_video(sample)
    check_audio(sample)


@pytest.mark.parametrize("name", FILES)
def test_shared_media_video(name: str, shared_media: Path) -> None:
    check_video(shared_media / name)


@pytest.mark.parametrize("name", FILES[:3])
def test_shared_media_audio(name: str, shared_media: Path) -> None:
    check_audio(shared_media / name)


def test_one_call_decode(sample: Path, tmp_path: Path) -> None:
    """mediakit.decode() writes what ffmpeg writes."""
    mediakit.decode(sample, audio_out=tmp_path / "a.pcm", video_out=tmp_path / "v.nv12")
    assert (tmp_path / "v.nv12").read_bytes() == ffmpeg(sample, "-map", "0:v:0", "-fps_mode", "passthrough",
                                                        "-f", "rawvideo", "-pix_fmt", "nv12")
    a = np.frombuffer((tmp_path / "a.pcm").read_bytes(), "<i2").astype(np.int32)
    r = reference_pcm(sample, 2, 44100)
    assert a.size == r.size and int(np.abs(a - r).max()) <= 1


def test_planes_are_views_of_the_decoded_picture(sample: Path) -> None:
    """planes: zero-copy views; packing them by hand gives to_numpy()'s NV12."""
    with mediakit.open(sample) as d:
        v = d.tracks[0]
        dec = mediakit.DecodeSession(v)
        frame = None
        for p in d.packets(v):
            frame = next(dec.decode(p), None)
            if frame is not None:
                break
        frame = frame or next(dec.flush())
        y, u, v_ = frame.planes
        w, h = frame.width, frame.height
        nv12 = frame.to_numpy()
        assert np.array_equal(nv12[:h], y[:h, :w])
        uv = nv12[h:].reshape(-1, w // 2, 2)
        assert np.array_equal(uv[..., 0], u[: (h + 1) // 2, : (w + 1) // 2])
        assert np.array_equal(uv[..., 1], v_[: (h + 1) // 2, : (w + 1) // 2])
        assert not y.flags.owndata, "a plane is a view, not a copy"


def test_plugins_lists_ffmpeg() -> None:
    names = {p.name: p for p in mediakit.plugins()}
    assert "ffmpeg" in names and names["ffmpeg"].codecs.get("h264") == 100


@pytest.mark.parametrize("layout, pix_fmt", [("i420", "yuv420p"), ("nv12", "nv12")])
def test_1080p_packing_like_ffmpeg(layout: str, pix_fmt: str, shared_media: Path) -> None:
    """1080p frames (rows without padding, the case that once crashed mk_frame_pack in
    release builds) packed as I420 and NV12 equal ffmpeg's yuv420p / nv12 bytes."""
    path = shared_media / "mp4_h264_1080p_ctts_elst_1s.mp4"
    _, frames = decode_track(path, "video", layout)
    ref = ffmpeg(path, "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", pix_fmt)
    assert b"".join(f.tobytes() for f in frames) == ref



# 10-bit 4:2:0 (with a display rotation: the API does not turn pictures, so -noautorotate)
# and 8-bit 4:4:4 sources: to_numpy("nv12") converts them with the FFmpeg plugin's picture
# converter (libswscale, set up as ffmpeg sets it up).
CONVERTED = [("mov_iphone_hevc_dolbyvision_rotation90_mebx_tracks.mov", ["-noautorotate"]),
             ("mp4_h264_bframes_iibbibb_elst_offset.mp4", [])]


@pytest.mark.parametrize("name,options", CONVERTED)
def test_converted_pictures_like_ffmpeg(name: str, options: Sequence[str], shared_media: Path) -> None:
    check_video(shared_media / name, options)


def decoded_frames(path: Path) -> list[mediakit.Frame]:
    """Every picture of the first video track, as Frame objects (not closed)."""
    with mediakit.open(path) as demuxer:
        track = next(t for t in demuxer.tracks if t.media_type == "video")
        with mediakit.DecodeSession(track) as decoder:
            return [f for p in demuxer.packets(track) for f in decoder.decode(p)] + list(decoder.flush())


def layout_shapes(layout: str, width: int, height: int) -> list[tuple[int, int]]:
    """(rows, bytes per row) of each plane of an 8-bit 4:2:0 layout, from its definition."""
    cw, ch = (width + 1) // 2, (height + 1) // 2
    return [(height, width), (ch, 2 * cw)] if layout == "nv12" else [(height, width), (ch, cw), (ch, cw)]


def test_planes_in_place_are_views_not_copies(sample: Path) -> None:
    """to_numpy("i420", planes=True) of yuv420p pictures (nothing to convert,
    interleave or split): read-only views of the decoder's memory (np.shares_memory with the
    frame's own planes, no data of their own) that stay valid after the frame is closed and
    dropped; their bytes, row for row, equal `ffmpeg -pix_fmt yuv420p -f rawvideo`."""
    frames = decoded_frames(sample)
    kept = []
    for f in frames:
        assert f.format == "yuv420p"
        planes = f.to_numpy("i420", planes=True)
        assert [p.shape for p in planes] == layout_shapes("i420", f.width, f.height)
        for mine, decoded in zip(planes, f.planes):
            assert np.shares_memory(mine, decoded), "a plane that needs no packing is a view, not a copy"
            assert not mine.flags.owndata and not mine.flags.writeable
        kept.append(planes)
        f.close()
    del frames, f
    ref = ffmpeg(sample, "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p")
    assert b"".join(p.tobytes() for planes in kept for p in planes) == ref


# Pictures that must be packed (yuv420p as NV12: the chroma interleaved) or converted first
# (10-bit 4:2:0, 8-bit 4:4:4): planes=True gives planes of one new buffer, equal to ffmpeg's.
PACKED = [("mp4_h264_aac_moov_at_start_ctts_8s.mp4", "nv12", "nv12", []),
          ("mov_iphone_hevc_dolbyvision_rotation90_mebx_tracks.mov", "nv12", "nv12", ["-noautorotate"]),
          ("mp4_h264_bframes_iibbibb_elst_offset.mp4", "i420", "yuv420p", [])]


@pytest.mark.parametrize("name,layout,pix_fmt,options", PACKED)
def test_planes_that_need_packing_are_copies_like_ffmpeg(name: str, layout: str, pix_fmt: str, options: Sequence[str],
                                                         shared_media: Path) -> None:
    path = shared_media / name
    out = []
    for f in decoded_frames(path):
        planes = f.to_numpy(layout, planes=True)
        assert [p.shape for p in planes] == layout_shapes(layout, f.width, f.height)
        assert not any(np.shares_memory(p, d) for p in planes for d in f.planes), "packed planes are new memory"
        out.append(b"".join(p.tobytes() for p in planes))
        f.close()
    ref = ffmpeg(path, "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", pix_fmt,
                 input_options=options)
    assert b"".join(out) == ref


def test_planes_true_is_for_pictures(sample: Path) -> None:
    with mediakit.open(sample) as demuxer:
        track = next(t for t in demuxer.tracks if t.media_type == "audio")
        with mediakit.DecodeSession(track) as decoder:
            frame = next(f for p in demuxer.packets(track) for f in decoder.decode(p))
    with pytest.raises(ValueError):
        frame.to_numpy("s16", planes=True)


def test_trim_ffmpeg_gives_ffmpegs_sample_count(shared_media: Path) -> None:
    """trim="ffmpeg": FFmpeg 5.1's output exactly (its last AAC frame kept whole), where the
    default (gapless) ends where the edit list says; oracle `ffmpeg -map 0:a:0 -f s16le -`."""
    path = shared_media / "m4a_aac_mono_afconvert_apple_elst.mp4"
    with mediakit.open(path) as demuxer:
        track = next(t for t in demuxer.tracks if t.media_type == "audio")
        with mediakit.DecodeSession(track, trim="ffmpeg") as decoder:
            frames = [f.to_numpy("s16") for p in demuxer.packets(track) for f in decoder.decode(p)]
            frames += [f.to_numpy("s16") for f in decoder.flush()]
        with pytest.raises(ValueError):
            mediakit.DecodeSession(track, trim="sometimes")
    ours = np.concatenate(frames).astype(np.int32).ravel()
    ref = np.frombuffer(ffmpeg(path, "-map", "0:a:0", "-f", "s16le"), dtype="<i2").astype(np.int32)
    assert ours.size == ref.size
    assert int(np.abs(ours - ref).max(initial=0)) <= 1
    assert ref.size > reference_pcm(path, track.channels, track.sample_rate).size  # the modes differ here


def test_decoding_is_lazy_and_the_loops_agree(sample: Path) -> None:
    """decode() sends at once and returns an iterator that receives as it is advanced (no
    list); DecodeSession.frames(packets) and the explicit send()/receive() loop (libavcodec's model,
    one to one with mk_decode_session_*) give ffmpeg's NV12 frames, the same ones."""
    with mediakit.open(sample) as d:
        v = d.tracks[0]
        dec = mediakit.DecodeSession(v)
        first = d.read_track(v.index)
        assert first is not None
        it = dec.decode(first)
        assert iter(it) is it and not isinstance(it, (list, tuple))
    with mediakit.open(sample) as d:
        v = d.tracks[0]
        lazy = [f.to_numpy().tobytes() for f in mediakit.DecodeSession(v).frames(d.packets(v))]
    with mediakit.open(sample) as d:
        v = d.tracks[0]
        dec = mediakit.DecodeSession(v)
        explicit = []
        for p in d.packets(v):
            while not dec.send(p):                     # frames waiting: receive, then again
                while (f := dec.receive()) is not None:
                    explicit.append(f.to_numpy().tobytes())
            while (f := dec.receive()) is not None:
                explicit.append(f.to_numpy().tobytes())
        for _ in dec.flush():
            pass
        assert dec.receive() is None
    ref = ffmpeg(sample, "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "nv12")
    assert lazy and b"".join(lazy) == ref
    assert explicit == lazy[:len(explicit)] and len(explicit) < len(lazy)   # the rest came from flush()


def test_unfinished_iterators_lose_no_frame(sample: Path) -> None:
    """decode() iterators left unfinished: their frames come out of the next one, in order."""
    with mediakit.open(sample) as d:
        v = d.tracks[0]
        dec = mediakit.DecodeSession(v)
        frames = []
        for i, p in enumerate(d.packets(v)):
            it = dec.decode(p)
            if i % 2:                                  # take every other iterator's frames
                frames += [f.to_numpy().tobytes() for f in it]
        frames += [f.to_numpy().tobytes() for f in dec.flush()]
    ref = ffmpeg(sample, "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "nv12")
    assert b"".join(frames) == ref
