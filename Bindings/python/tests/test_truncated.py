"""A file cut short, through the Python API: read and decoded as far as it goes, as ffmpeg
decodes it (the oracle: ffmpeg's decode of the same cut file, NV12 byte-identical, s16
within 1 per sample and of the same length), with a mediakit.TruncatedWarning naming the
offset of the cut (also in Demuxer.warnings) instead of an exception.

Inputs: an H.264/AAC MP4 (moov at the start) cut inside its sample data, and the Ogg Opus
file of ../shared/media that is cut inside a page (truncation_lib makes and cuts them)."""
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "Tests" / "oracle"))
import oracle_lib  # noqa: E402
import truncation_lib  # noqa: E402

import numpy as np
import pytest

import mediakit

OPUS = "ogg_opus_stereo_truncated_10000b_no_eos.opus"


@pytest.fixture(scope="module")
def cut_mp4(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("py-cut")
    src = folder / "source.mp4"
    truncation_lib.make_source("mp4_faststart", src)
    cut: Path = truncation_lib.cut_copy(src, "mp4_faststart", "mdat", folder / "cut.mp4")
    return cut


def reference(path: Path, kind: str) -> bytes:
    stream = truncation_lib.streams(path)[kind]
    cmd = truncation_lib.ffmpeg_decode_cmd(path, stream)
    proc = oracle_lib.run(cmd)
    assert proc.returncode == 0, proc.stderr
    pcm: bytes = proc.stdout
    return pcm


def test_iteration_ends_at_the_cut_with_a_warning(cut_mp4: Path) -> None:
    with pytest.warns(mediakit.TruncatedWarning, match=r"truncated at offset \d+") as caught:
        with mediakit.open(cut_mp4) as demuxer:
            packets = list(demuxer)
            assert packets, "the packets before the cut are read"
            assert any("truncated at offset" in w for w in demuxer.warnings), demuxer.warnings
            assert demuxer.read() is None, "after the cut, read() returns None"
    assert caught[0].filename == __file__, "the warning points at the caller's line"


def test_a_truncated_warning_can_be_made_an_error(cut_mp4: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", mediakit.TruncatedWarning)
        with mediakit.open(cut_mp4) as demuxer, pytest.raises(mediakit.TruncatedWarning):
            for _ in demuxer:
                pass


@pytest.mark.parametrize("kind", ["audio", "video"])
def test_decoder_on_a_cut_file_like_ffmpeg(kind: str, cut_mp4: Path) -> None:
    ref = reference(cut_mp4, kind)
    with pytest.warns(mediakit.TruncatedWarning):
        with mediakit.open(cut_mp4) as demuxer:
            track = next(t for t in demuxer.tracks if t.media_type == kind)
            with mediakit.DecodeSession(track) as decoder:
                frames = []
                for packet in demuxer.packets(track):
                    frames += [f.to_numpy("s16" if kind == "audio" else "nv12") for f in decoder.decode(packet)]
                frames += [f.to_numpy("s16" if kind == "audio" else "nv12") for f in decoder.flush()]
    ours = b"".join(f.tobytes() for f in frames)
    if kind == "video":
        assert ours == ref, f"NV12: ours {len(ours)} bytes, ffmpeg {len(ref)}"
    else:
        assert oracle_lib.compare_pcm_s16(ours, ref, track.channels) is None


def test_one_call_decode_of_a_cut_file(cut_mp4: Path, tmp_path: Path) -> None:
    """mediakit.decode() (mk_decode_file, MK_ETRUNCATED) writes ffmpeg's output and warns."""
    with pytest.warns(mediakit.TruncatedWarning, match=r"truncated at offset \d+"):
        mediakit.decode(cut_mp4, audio_out=tmp_path / "a.pcm", video_out=tmp_path / "v.nv12")
    assert (tmp_path / "v.nv12").read_bytes() == reference(cut_mp4, "video")
    assert oracle_lib.compare_pcm_s16((tmp_path / "a.pcm").read_bytes(), reference(cut_mp4, "audio"), 1) is None


def test_shared_cut_ogg(shared_media: Path, tmp_path: Path) -> None:
    path = shared_media / OPUS
    with pytest.warns(mediakit.TruncatedWarning, match=r"truncated at offset \d+"):
        mediakit.decode(path, audio_out=tmp_path / "a.pcm")
    ours = np.frombuffer((tmp_path / "a.pcm").read_bytes(), dtype="<i2")
    assert oracle_lib.compare_pcm_s16(ours.tobytes(), reference(path, "audio"), 2) is None


@pytest.mark.parametrize("ext", ["mp4", "mkv"])
def test_remux_of_a_cut_file_warns_and_copies_what_there_is(ext: str, cut_mp4: Path, tmp_path: Path) -> None:
    """mediakit.remux of the cut MP4 (mk_remux's MK_ETRUNCATED): the output is written, a
    TruncatedWarning names the offset of the cut, and the output holds as many packets as the
    cut leaves whole (ffprobe's packets of the intact source that end before the cut; the
    one the cut goes through is left out)."""
    out = tmp_path / f"out.{ext}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mediakit.remux(cut_mp4, out)
    cuts = [w for w in caught if issubclass(w.category, mediakit.TruncatedWarning)]
    assert len(cuts) == 1 and "truncated at offset" in str(cuts[0].message), [str(w.message) for w in caught]
    size = cut_mp4.stat().st_size
    proc = oracle_lib.run(["ffprobe", "-v", "error", "-show_entries", "packet=pos,size", "-of", "csv=p=0",
                           cut_mp4.parent / "source.mp4"])
    assert proc.returncode == 0, proc.stderr
    whole = sum(1 for line in proc.stdout.decode().split() if int(line.split(",")[0]) + int(line.split(",")[1]) <= size)
    ours = oracle_lib.run(["ffprobe", "-v", "error", "-show_entries", "packet=size", "-of", "csv=p=0", out])
    assert ours.returncode == 0, ours.stderr
    assert len(ours.stdout.split()) == whole


def test_transcode_of_a_cut_file_warns_and_encodes_what_there_is(cut_mp4: Path, tmp_path: Path) -> None:
    """mediakit.transcode of the cut MP4 (mk_transcode_with's MK_ETRUNCATED): the output is
    written with a TruncatedWarning naming the cut, and it decodes to as many samples as
    ffmpeg decodes from the cut file (the AAC encoder keeps the length: gapless)."""
    out = tmp_path / "out.m4a"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mediakit.transcode(cut_mp4, out)
    cuts = [w for w in caught if issubclass(w.category, mediakit.TruncatedWarning)]
    assert len(cuts) == 1 and "truncated at offset" in str(cuts[0].message), [str(w.message) for w in caught]
    def samples(path: Path) -> int:
        proc = oracle_lib.run(["ffmpeg", "-v", "quiet", "-nostdin", "-i", path, "-map", "0:a:0", "-f", "s16le", "-ac", "1", "-"])
        return len(proc.stdout) // 2
    assert samples(out) == samples(cut_mp4) > 0
