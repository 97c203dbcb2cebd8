"""mediakit.remux against ffmpeg's stream identity (ORACLES.md): `ffmpeg -v error -i F -map 0
-c copy -f framemd5 -` prints the same for the output as for the input (#software aside)."""
import subprocess
from pathlib import Path
from typing import Any

import pytest

import mediakit

from bindings_lib import ffprobe_json, framemd5

FILES = ["mp4_h264_aac_moov_at_start_ctts_8s.mp4", "mp4_two_aac_5p1_audio_tracks.mp4", "mp4_h264_rotation90_matrix.mp4"]


@pytest.mark.parametrize("options", [{}, {"faststart": True}, {"fragment": 1.0}, {"hybrid": 1.0}],
                         ids=["progressive", "faststart", "fragmented", "hybrid"])
@pytest.mark.parametrize("name", FILES)
def test_remux_keeps_the_streams(name: str, options: dict[str, Any], shared_media: Path, tmp_path: Path) -> None:
    src, dst = shared_media / name, tmp_path / "out.mp4"
    mediakit.remux(src, dst, **options)
    assert framemd5(dst) == framemd5(src)
    with mediakit.open(dst) as out, mediakit.open(src) as inp:
        assert [(t.codec, t.language, t.rotation) for t in out.tracks] == [(t.codec, t.language, t.rotation) for t in inp.tracks]


def test_remux_errors(sample: Path, tmp_path: Path) -> None:
    with pytest.raises(mediakit.MediaError) as e:
        mediakit.remux("/nonexistent/in.mp4", tmp_path / "x.mp4")
    assert e.value.name == "MK_ENOTFOUND"
    with pytest.raises(mediakit.MediaError):
        mediakit.remux(sample, "/nonexistent-dir/out.mp4")
    with pytest.raises(ValueError):
        mediakit.remux(sample, tmp_path / "y.mp4", faststart=True, fragment=2)
    with pytest.raises(TypeError):
        mediakit.remux(42, tmp_path / "z.mp4")  # type: ignore[arg-type]
    assert not (tmp_path / "x.mp4").exists()


@pytest.mark.parametrize("name,ext", [("ogg_opus_stereo_tiny_155b.opus", "opus"), ("ogg_vorbis_48k_stereo_bear.ogg", "ogg")])
def test_remux_into_ogg(name: str, ext: str, shared_media: Path, tmp_path: Path) -> None:
    """mediakit.remux (mk_remux) picks the Ogg muxer from the extension: the output holds the
    input's packets (stream, size, payload MD5) and FFmpeg decodes it to the input's samples."""
    src, dst = shared_media / name, tmp_path / f"out.{ext}"
    mediakit.remux(src, dst)
    payloads = [[(l.split(",")[0], l.split(",")[4], l.split(",")[5]) for l in framemd5(f) if not l.startswith("#")] for f in (src, dst)]
    assert payloads[0] == payloads[1]
    pcm = [subprocess.run(["ffmpeg", "-v", "error", "-i", str(f), "-f", "f32le", "-"], check=True, capture_output=True).stdout
           for f in (src, dst)]
    assert pcm[0] == pcm[1]


def _subtitle_packets(path: Path) -> list[str]:
    """ffprobe's pts, duration, size and data hash of the first subtitle stream's packets."""
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "s:0", "-show_entries",
                          "packet=pts_time,duration_time,size", "-show_data_hash", "md5", "-of", "compact", str(path)],
                         capture_output=True, check=True)
    return out.stdout.decode().splitlines()


@pytest.mark.parametrize("ext,codec", [("mp4", "mov_text"), ("mkv", "copy")])
def test_remux_keeps_a_subtitle_track(ext: str, codec: str, shared_media: Path, tmp_path: Path) -> None:
    """A Matroska SubRip track: copied into Matroska, converted to tx3g in MP4, as ffmpeg writes
    it with `-c:s copy` / `-c:s mov_text`."""
    src, dst, ref = shared_media / "breadth" / "mkv_androidx_9d9030_full_blocks.mkv", tmp_path / f"o.{ext}", tmp_path / f"r.{ext}"
    mediakit.remux(src, dst)
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", str(src), "-map", "0:s:0", "-c:s", codec, str(ref)], check=True)
    assert _subtitle_packets(dst) == _subtitle_packets(ref) != []


def _payloads(path: Path) -> list[tuple[str, str, str]]:
    """(stream, size, MD5) of every packet ffmpeg reads from `path`."""
    return [(l.split(",")[0].strip(), l.split(",")[4].strip(), l.split(",")[5].strip()) for l in framemd5(path) if not l.startswith("#")]


def test_remux_and_muxer_choose_a_muxer_by_name(shared_media: Path, tmp_path: Path) -> None:
    """format= names the muxer whatever the extension (mk_muxer_settings.format, as mk-remux
    --format): "matroska" writes Matroska under a .mp4 name, for remux and for Muxer; ffprobe
    reads it as Matroska with the source's packets (stream, size, payload MD5)."""
    src = shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4"
    by_remux, by_muxer = tmp_path / "remux.mp4", tmp_path / "muxer.mp4"
    mediakit.remux(src, by_remux, format="matroska")
    with mediakit.open(src) as d, mediakit.Muxer(by_muxer, format="matroska") as m:
        for t in d.tracks:
            m.add_track(t)
        for p in d.packets():
            m.write(p.track, p)
    expected = sorted(_payloads(src))
    for out in (by_remux, by_muxer):
        info = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=format_name", "-of", "default=nw=1:nk=1", str(out)],
                              check=True, capture_output=True, text=True).stdout.strip()
        assert info == "matroska,webm", out
        assert sorted(_payloads(out)) == expected, out


def test_an_unknown_muxer_name_is_not_found(shared_media: Path, tmp_path: Path) -> None:
    """A name no muxer has: NotFoundError naming it, and nothing written."""
    src = shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4"
    out = tmp_path / "out.mkv"
    with pytest.raises(mediakit.NotFoundError, match="no-such-muxer"):
        mediakit.remux(src, out, format="no-such-muxer")
    with pytest.raises(mediakit.NotFoundError, match="no-such-muxer"):
        mediakit.Muxer(out, format="no-such-muxer")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["mka_opus_5p1.mka", "webm_vorbis_stereo_16k_tone.webm", "mp4_h264_aac_text_chapter_track_chpl.mp4"])
def test_track_default_and_forced_marks_and_their_remux(name: str, shared_media: Path, tmp_path: Path) -> None:
    """Track.is_default / forced are ffprobe's default / forced dispositions (files with a
    track not default: a Matroska FlagDefault 0, a WebM one, an MP4 chapter track without
    track_enabled), and mediakit.remux into Matroska keeps them (ffprobe of the output)."""
    src = shared_media / name
    streams = ffprobe_json(src, "-show_streams")["streams"]
    with mediakit.open(src) as demuxer:
        marks = [(t.is_default, t.forced) for t in demuxer.tracks]
    assert marks == [(bool(s["disposition"]["default"]), bool(s["disposition"]["forced"])) for s in streams]
    assert any(not d for d, _ in marks)
    if name.endswith(".mp4"):
        return      # its chapter track (a data stream) is not a Matroska track
    out = tmp_path / "out.mkv"
    mediakit.remux(src, out)
    assert [(bool(s["disposition"]["default"]), bool(s["disposition"]["forced"])) for s in ffprobe_json(out, "-show_streams")["streams"]] == marks
