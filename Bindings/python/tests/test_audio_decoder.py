"""mediakit.AudioDecoder against ffmpeg: a time range is the samples ffmpeg decodes in that range
(`-af atrim=start_sample=S0:end_sample=S1` at the track's own rate, S = round(t * rate)), as
float32 (channels, samples), sample-exact at both ends; resampled, it is ffmpeg's decode of the
whole track put through mediakit.AudioConverter at the target rate and cut at the same samples
(within 1 LSB in s16 terms); bit for bit otherwise (ffmpeg decoding Vorbis with libvorbis, as
the plugin does), Opus within 1 LSB (libopus against ffmpeg's own decoder). MP3 (LAME gapless), AAC in MP4 (an edit list), Vorbis from
../shared/media; WAV, FLAC and Opus made by ffmpeg from a test signal."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
import mediakit  # noqa: E402

SHARED = [("mp3_mpeg1_44k_stereo_vbr_xing_9s.mp3", 3.1, 4.3), ("m4a_aac_mono_afconvert_apple_elst.mp4", 0.1, 0.4),
          ("ogg_vorbis_48k_stereo_bear.ogg", 0.25, 0.8)]
LSB = 1 / 32768
# libvorbis, which MediaKit's Vorbis plugin uses, through ffmpeg's wrapper of it (its own Vorbis
# decoder gives float where the plugin gives libvorbis's s16, as that wrapper does: 2 LSB apart).
DECODERS = {".ogg": ["-c:a", "libvorbis"]}


pytestmark = pytest.mark.usefixtures("oracle_tools")   # ffmpeg / ffprobe missing: a failure, not a skip

def ffmpeg_samples(path: Path, first: int = 0, stop: int | None = None) -> Any:
    """ffmpeg's decode of the first audio track at its own rate, samples [first, stop), as (channels, n) float32."""
    rate, channels = (int(v) for v in subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=sample_rate,channels", "-of", "csv=p=0",
         str(path)], check=True, capture_output=True, text=True).stdout.strip().split(","))
    trim = f"atrim=start_sample={first}" + (f":end_sample={stop}" if stop is not None else "")
    raw = subprocess.run(["ffmpeg", "-v", "error", *DECODERS.get(path.suffix, []), "-i", str(path), "-map", "0:a:0", "-af", trim, "-f", "f32le", "-"],
                         check=True, capture_output=True).stdout
    return np.frombuffer(raw, dtype="<f4").reshape(-1, channels).T, rate


def same(got: Any, ref: Any, path: Path) -> None:
    """Bit for bit, but Opus: the plugin is libopus in float, ffmpeg's float Opus decoder is its
    own (its libopus wrapper gives s16): 4e-8 apart, within the issue's 1 LSB in s16 terms."""
    if path.suffix == ".opus":
        np.testing.assert_allclose(got, ref, rtol=0, atol=LSB, err_msg=path.name)
    else:
        np.testing.assert_array_equal(got, ref, err_msg=path.name)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """One second of a two-tone test signal as WAV (s16), FLAC (s16) and Opus, by ffmpeg."""
    folder = tmp_path_factory.mktemp("audio-decoder")
    out = []
    for name, args in [("tone.wav", ["-c:a", "pcm_s16le"]), ("tone.flac", ["-c:a", "flac"]),
                       ("tone.opus", ["-c:a", "libopus", "-b:a", "64k"])]:
        path = folder / name
        subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=f=440:d=1:r=48000", "-f", "lavfi", "-i",
                        "sine=f=660:d=1:r=48000", "-filter_complex", "[0][1]amerge=inputs=2", *args, str(path)], check=True)
        out.append(path)
    return out


def test_ranges_are_ffmpegs_samples(made: list[Path], shared_media: Path) -> None:
    cases = [(p, 0.25, 0.75) for p in made] + [(shared_media / n, a, b) for n, a, b in SHARED]
    for path, start, stop in cases:
        with mediakit.AudioDecoder(path) as dec:
            got = dec.get_samples_played_in_range(start, stop)
        rate = got.sample_rate
        s0, s1 = round(start * rate), round(stop * rate)
        ref, ref_rate = ffmpeg_samples(path, s0, s1)
        assert rate == ref_rate, path.name
        assert got.data.dtype == np.float32 and got.data.shape == ref.shape, (path.name, got.data.shape, ref.shape)
        same(got.data, ref, path)
        assert got.pts_seconds == s0 / rate and got.duration_seconds == (s1 - s0) / rate


def test_whole_tracks_are_ffmpegs(made: list[Path]) -> None:
    """The lossless files and Opus (whose end the Ogg granule trims, in ffmpeg too): every sample."""
    for path in made:
        with mediakit.AudioDecoder(path) as dec:
            got = dec.get_all_samples()
            again = dec.get_samples_played_in_range(0.5)      # a second read of the same decoder
        ref, _ = ffmpeg_samples(path)
        same(got.data, ref, path)
        same(again.data, ref[:, round(0.5 * got.sample_rate):], path)


def test_one_decoder_thread_gives_the_same_samples(made: list[Path], shared_media: Path) -> None:
    """threads=1 (no libavcodec frame threads: FLAC has them) decodes the samples ffmpeg decodes."""
    for path in [made[1], shared_media / SHARED[0][0]]:
        with mediakit.AudioDecoder(path, threads=1) as dec:
            got = dec.get_all_samples()
        ref, _ = ffmpeg_samples(path)
        same(got.data, ref, path)
    with pytest.raises(ValueError, match="threads"):
        mediakit.AudioDecoder(made[1], threads=-1)


def test_resampled_and_mixed_ranges(made: list[Path], shared_media: Path) -> None:
    for path, start, stop in [(made[1], 0.3, 0.9), (shared_media / SHARED[0][0], 2.0, 2.5)]:
        with mediakit.AudioDecoder(path, sample_rate=16000, layout="mono") as dec:
            got = dec.get_samples_played_in_range(start, stop)
        whole, rate = ffmpeg_samples(path)
        conv = mediakit.AudioConverter("f32p", rate, whole.shape[0], "f32p", 16000, "mono")
        ref = np.concatenate([conv.convert(np.ascontiguousarray(whole)), conv.flush()], axis=1)
        ref = ref[:, round(start * 16000):round(stop * 16000)]
        assert got.sample_rate == 16000 and got.data.shape == ref.shape, (path.name, got.data.shape, ref.shape)
        assert np.abs(got.data - ref).max() <= LSB, path.name


def test_errors(made: list[Path], sample: Path) -> None:
    with pytest.raises(ValueError, match="no audio track"):
        mediakit.AudioDecoder(_video_only(made[0], sample))
    with mediakit.AudioDecoder(made[0]) as dec:
        with pytest.raises(ValueError, match="start at 0 or later"):
            dec.get_samples_played_in_range(0.5, 0.2)
        past = dec.get_samples_played_in_range(5.0, 6.0)
        assert past.data.shape == (2, 0)
    with pytest.raises(mediakit.InvalidArgumentError, match="closed"):
        dec.get_all_samples()
    with pytest.raises(ValueError, match="threads"):
        mediakit.AudioConverter("s16", 44100, "stereo", "f32", 44100, "stereo", threads=-2)


def _video_only(near: Path, sample: Path) -> Path:
    out = near.with_name("video-only.mp4")
    if not out.exists():
        subprocess.run(["ffmpeg", "-v", "error", "-i", str(sample), "-map", "0:v", "-c", "copy", str(out)], check=True)
    return out
