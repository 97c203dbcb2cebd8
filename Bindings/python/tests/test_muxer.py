"""mediakit.Muxer (C mk_muxer_*) against ffmpeg's stream identity (ORACLES.md): the packets
ffmpeg reads from the file written (`ffmpeg -i F -map 0 -c copy -f framemd5 -`) are those of the
source, per stream. Tracks copied from a demuxer, and tracks from codec parameters whose packets
were parsed by Samples/python/mux_h264.py; the target name never holds a half-written file."""
from __future__ import annotations

import subprocess
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import mediakit
import mux_h264

from bindings_lib import framemd5, run_sample

COPY_FILES = ["mp4_h264_aac_moov_at_start_ctts_8s.mp4", "mp4_h264_rotation90_matrix.mp4"]


def per_stream(lines: list[str]) -> list[str]:
    """framemd5 lines with the packets grouped by stream (file order within a stream): the
    interleaving of the tracks is the muxer's choice, not part of the streams."""
    head = [line for line in lines if line.startswith("#")]
    packets = [line for line in lines if not line.startswith("#")]
    return head + sorted(packets, key=lambda line: int(line.split(",")[0]))


@pytest.mark.parametrize("options", [{}, {"fragment": 1.0}], ids=["progressive", "fragmented"])
@pytest.mark.parametrize("name", COPY_FILES)
def test_tracks_copied_from_a_demuxer(name: str, options: dict[str, Any], shared_media: Path, tmp_path: Path) -> None:
    src, dst = shared_media / name, tmp_path / "out.mp4"
    with mediakit.open(src) as demuxer, mediakit.Muxer(dst, **options) as mux:
        index = {t.index: mux.add_track(t) for t in demuxer.tracks}
        for packet in demuxer:
            mux.write(index[packet.track], packet)
        assert not dst.exists(), "the target name appears only when the file is finished"
    assert mux.state == "finished" and mux.closed
    assert per_stream(framemd5(dst)) == per_stream(framemd5(src))
    with mediakit.open(dst) as out, mediakit.open(src) as inp:
        assert [(t.codec, t.language, t.rotation) for t in out.tracks] == \
            [(t.codec, t.language, t.rotation) for t in inp.tracks]


@pytest.mark.parametrize("name,output", [("mp4_h264_aac_moov_at_start_ctts_8s.mp4", "out.mkv"),
                                         ("ogg_opus_stereo_tiny_155b.opus", "out.opus"),
                                         ("ogg_vorbis_48k_stereo_bear.ogg", "out.ogg")])
def test_tracks_copied_into_matroska_and_ogg(name: str, output: str, shared_media: Path, tmp_path: Path) -> None:
    """The extension picks the container: the packets ffmpeg reads back (stream, size, payload
    MD5) are the source's; the timestamps are the container's own (Matroska's milliseconds)."""
    src, dst = shared_media / name, tmp_path / output
    with mediakit.open(src) as demuxer, mediakit.Muxer(dst) as mux:
        index = {t.index: mux.add_track(t) for t in demuxer.tracks}
        for packet in demuxer:
            mux.write(index[packet.track], packet)

    def payloads(path: Path) -> list[tuple[str, str, str]]:
        fields = [line.split(",") for line in per_stream(framemd5(path)) if not line.startswith("#")]
        return [(f[0], f[4].strip(), f[5].strip()) for f in fields]

    assert payloads(dst) == payloads(src)
    with pytest.raises(mediakit.InvalidArgumentError):          # the layouts are MP4's
        mediakit.Muxer(tmp_path / "x.mkv", faststart=True)


def test_open_for_writing_is_a_muxer(sample: Path, tmp_path: Path) -> None:
    """``mediakit.open(path, "w")``, as ``av.open(path, "w")``."""
    dst = tmp_path / "w.mp4"
    with mediakit.open(sample) as demuxer, mediakit.open(dst, "w", faststart=True) as mux:
        assert isinstance(mux, mediakit.Muxer)
        video = mux.add_track(demuxer.streams.video[0])
        for packet in demuxer.demux(demuxer.streams.video[0]):
            mux.write(video, packet)
    assert per_stream(framemd5(dst)) == per_stream(framemd5(sample, "0:v:0"))
    with pytest.raises(ValueError):
        mediakit.open(dst, "a")  # type: ignore[call-overload]


@pytest.mark.parametrize("options", [{}, {"faststart": True}, {"fragment": 0.5}, {"hybrid": 0.5}],
                         ids=["progressive", "faststart", "fragmented", "hybrid"])
def test_an_exception_cancels_and_leaves_nothing(options: dict[str, Any], sample: Path, tmp_path: Path) -> None:
    """An exception inside the with block cancels: neither the target nor a temporary file
    (hidden or .partial) is left; the exception goes on."""
    out = tmp_path / "out"
    out.mkdir()
    dst = out / "cancelled.mp4"
    with pytest.raises(KeyError, match="stop here"):
        with mediakit.open(sample) as demuxer, mediakit.Muxer(dst, **options) as mux:
            tracks = [mux.add_track(t) for t in demuxer.tracks]
            for n, packet in enumerate(demuxer):
                mux.write(tracks[packet.track], packet)
                if n == 200:
                    raise KeyError("stop here")
    assert mux.state == "cancelled"
    assert list(out.iterdir()) == []


def test_misuse_raises_the_error_of_its_kind(sample: Path, tmp_path: Path) -> None:
    dst = tmp_path / "m.mp4"
    with mediakit.open(sample) as demuxer:
        mux = mediakit.Muxer(dst)
        with pytest.raises(TypeError):
            mux.add_track("h264")  # type: ignore[arg-type]
        v = mux.add_track(demuxer.tracks[0])
        packet = demuxer.read_track(0)
        assert packet is not None
        with pytest.raises(mediakit.InvalidArgumentError) as bad_index:
            mux.write(7, packet)
        assert isinstance(bad_index.value, ValueError) and bad_index.value.name == "MK_EINVAL"
        with pytest.raises(ValueError):
            mux.write(v, b"\x00\x00\x00\x01", dts=0)        # bytes need their pts
        mux.write(v, packet)
        with pytest.raises(mediakit.StateError):             # tracks come before the first packet
            mux.add_track(demuxer.tracks[1])
        mux.finish()
        assert dst.exists()
        with pytest.raises(mediakit.StateError):
            mux.write(v, packet)
        with pytest.raises(mediakit.StateError):
            mux.finish()
        mux.cancel()                                          # harmless after finish: the file stays
        mux.close()
        assert dst.exists()
        with pytest.raises(mediakit.InvalidArgumentError):   # closed
            mux.finish()
    with pytest.raises(mediakit.MediaIOError) as e:
        mediakit.Muxer(tmp_path / "no-such-folder" / "x.mp4")
    assert isinstance(e.value, OSError) and "no-such-folder" in e.value.message


def test_h264_from_codec_parameters_like_ffmpeg_copy(h264_stream: tuple[Path, Path], tmp_path: Path) -> None:
    """The issue's check: Samples/python/mux_h264.py parses the Annex B stream itself (NAL units,
    access units, POC for the B-frames' presentation order, avcC) and writes it through
    mediakit.Muxer from CodecParameters. The oracle is ffmpeg's `-c copy` of the same stream from
    the MP4 it was encoded into (raw H.264 has no timestamps, and ffmpeg 5.1's raw demuxer leaves
    pts unset: its own MP4 of the raw stream shows every frame at pts == dts). ffmpeg's MP4 muxer
    chose the time scale 12800 for 25 fps; the sample is given the same, so that the lines,
    timestamps included, compare as they are."""
    raw, reference = h264_stream
    dst = tmp_path / "parsed.mp4"
    run = run_sample("mux_h264.py", raw, dst, "--fps", "25", "--timescale", "12800")
    assert run.stdout.strip() == f"{dst}: 60 frames, 320x240, 25 fps, reorder depth 2"
    ours, ref = framemd5(dst), framemd5(reference)
    assert any(line.startswith("#extradata") for line in ref)
    assert ours == ref


def test_decoder_from_codec_parameters_like_ffmpeg(h264_stream: tuple[Path, Path]) -> None:
    """Packets made with Packet.create from the parsed stream, decoded by a DecodeSession opened from
    CodecParameters (C mk_decode_session_open_params): every picture equals ffmpeg's decode of the raw
    stream, in presentation order."""
    raw, _ = h264_stream
    parser = mux_h264.parse(raw.read_bytes())
    timed, depth = mux_h264.timestamps(parser.units, 512)
    sps = parser.sps[0]
    params = mediakit.CodecParameters("h264", "video", extradata=parser.avcc(), width=sps.width, height=sps.height,
                                      time_base=Fraction(1, 12800), reorder_depth=depth)
    packets = [mediakit.Packet.create(t.unit.sample(), pts=t.pts, dts=t.dts, duration=t.duration,
                                      is_keyframe=t.unit.idr) for t in timed]
    assert packets[0].stream is None and packets[0].is_keyframe and bytes(packets[1]) == timed[1].unit.sample()
    with mediakit.DecodeSession(params) as decoder:
        assert decoder.track is None and decoder.parameters == params
        frames = [f.to_ndarray("i420").tobytes() for f in decoder.frames(packets)]
        with pytest.raises(mediakit.InvalidArgumentError):
            decoder.seek(1.0)                         # no demuxer to move
    ref = subprocess.run(["ffmpeg", "-v", "error", "-i", str(raw), "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"],
                         check=True, capture_output=True).stdout
    size = 320 * 240 * 3 // 2
    assert len(frames) == len(ref) // size == 60
    assert all(f == ref[i * size:(i + 1) * size] for i, f in enumerate(frames))


def ffprobe_languages(path: Path) -> list[str]:
    """Each stream's language tag as ffprobe reads it, "und" and none alike as "" (FFmpeg's
    Matroska reader leaves out "und", its MP4 reader gives it)."""
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream_tags=language", "-of", "csv=p=0",
                          str(path)], capture_output=True, text=True, check=True).stdout
    return ["" if line.strip() == "und" else line.strip() for line in out.splitlines()]


@pytest.mark.parametrize("languages", [("jpn", "fra"), ("und", "ger")])
def test_matroska_keeps_the_tracks_languages(languages: tuple[str, str], tmp_path: Path) -> None:
    """A track copied into Matroska keeps its language: ffprobe reads the same language tags
    from the copy as from the MP4 that ffmpeg wrote (an "und" track stays undetermined, where
    a Matroska track without a Language element reads as English: "eng")."""
    src, dst = tmp_path / "in.mp4", tmp_path / "out.mkv"
    video, audio = languages
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=1",
                    "-f", "lavfi", "-i", "sine=duration=1", "-c:v", "libx264", "-c:a", "aac",
                    "-metadata:s:v:0", f"language={video}", "-metadata:s:a:0", f"language={audio}", str(src)], check=True)
    with mediakit.open(src) as demuxer, mediakit.Muxer(dst) as mux:
        index = {t.index: mux.add_track(t) for t in demuxer.tracks}
        for packet in demuxer:
            mux.write(index[packet.track], packet)
    assert ffprobe_languages(dst) == ffprobe_languages(src), (ffprobe_languages(dst), ffprobe_languages(src))
    assert ffprobe_languages(src) == [x if x != "und" else "" for x in languages]


def _annexb(length_prefixed: bytes) -> bytes:
    """4-byte length-prefixed NAL units as Annex B (each after 00 00 00 01)."""
    out, i = bytearray(), 0
    while i + 4 <= len(length_prefixed):
        n = int.from_bytes(length_prefixed[i:i + 4], "big")
        out += b"\0\0\0\1" + length_prefixed[i + 4:i + 4 + n]
        i += 4 + n
    assert i == len(length_prefixed)
    return bytes(out)


@pytest.mark.parametrize("ext", ["mp4", "mkv"])
@pytest.mark.parametrize("given", ["extradata", "first_packet"])
def test_h264_in_annexb_form_is_converted_by_the_muxer(h264_stream: tuple[Path, Path], tmp_path: Path, ext: str,
                                                         given: str) -> None:
    """H.264 handed to the muxer in Annex B form (start codes, as MPEG-TS and raw streams give it):
    the MP4 of libx264's stream read with mediakit, its avcC's SPS / PPS as Annex B extradata (or
    none: the muxer takes them from the first packet, which here has them only when given the
    extradata's in front), every sample as Annex B. The muxer builds the avcC and length-prefixes
    the samples back: ffmpeg's framemd5 (extradata, timestamps, sizes, MD5s) equals that of
    `ffmpeg -i x264.mp4 -c copy` into the same container."""
    _, source = h264_stream
    reference = tmp_path / f"ref.{ext}"
    subprocess.run(["ffmpeg", "-v", "error", "-i", str(source), "-c", "copy", str(reference)], check=True)
    with mediakit.open(source) as demuxer:
        track = demuxer.tracks[0]
        avcc = track.extradata
        sps_pps = b""
        i = 6
        for count in (avcc[5] & 0x1F, None):
            if count is None:
                count = avcc[i]
                i += 1
            for _ in range(count):
                n = int.from_bytes(avcc[i:i + 2], "big")
                sps_pps += b"\0\0\0\1" + avcc[i + 2:i + 2 + n]
                i += 2 + n
        params = mediakit.CodecParameters("h264", "video", extradata=sps_pps if given == "extradata" else b"",
                                          width=track.width, height=track.height, time_base=track.time_base)
        ours = tmp_path / f"ours.{ext}"
        with mediakit.Muxer(ours) as mux:
            v = mux.add_track(params)
            for n, packet in enumerate(demuxer.packets(0)):
                data = _annexb(packet.data)
                if n == 0 and given == "first_packet":
                    data = sps_pps + data[1:]       # 3-byte start code after the PPS, as x264 writes it
                mux.write(v, data, pts=packet.pts, dts=packet.dts, duration=packet.duration, is_keyframe=packet.is_keyframe)
    ours_lines, ref_lines = framemd5(ours), framemd5(reference)
    assert any(line.startswith("#extradata") for line in ref_lines)
    if given == "first_packet":
        # The first sample keeps the SPS and PPS in front of its slices, as FFmpeg keeps
        # in-band parameter sets: each after a 4-byte length where it had a 4-byte start code.
        first = next(k for k, line in enumerate(ref_lines) if line.startswith("0,"))
        ours_size, ref_size = int(ours_lines[first].split(",")[4]), int(ref_lines[first].split(",")[4])
        assert ours_size == ref_size + len(sps_pps)
        del ours_lines[first], ref_lines[first]
    assert ours_lines == ref_lines
