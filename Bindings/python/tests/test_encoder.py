"""mediakit.Encoder and mediakit.transcode (issue 15) against ffmpeg / ffprobe: FLAC packets
from a numpy array, written as a .flac with the encoder's STREAMINFO, decode bit-exactly with
ffmpeg; Opus gives its OpusHead with the encoder's pre-skip; transcode() writes an AAC .m4a
that ffprobe reads with the rate and channels asked for; a refused rate raises, naming the
rates the encoder takes."""
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import mediakit


def music(frames: int, rate: int = 48000) -> np.ndarray:
    t = np.arange(frames) / rate
    rng = np.random.default_rng(7)
    left = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * rng.standard_normal(frames)
    right = 0.3 * np.sin(2 * np.pi * 660 * t) + 0.05 * rng.standard_normal(frames)
    return (np.stack([left, right], axis=1) * 32767).clip(-32768, 32767).astype("<i2")


def test_flac_from_numpy_decodes_bit_exact_with_ffmpeg(tmp_path: Path) -> None:
    pcm = music(48000 + 123)
    enc = mediakit.Encoder("flac", "s16", 48000, "stereo")
    assert enc.codec == "flac" and enc.sample_rate == 48000 and enc.channels == 2
    packets = enc.encode(pcm[:20000]) + enc.encode(pcm[20000:]) + enc.flush()
    info = enc.extradata
    assert len(info) == 34, f"STREAMINFO is 34 bytes, got {len(info)}"
    out = tmp_path / "numpy.flac"
    out.write_bytes(b"fLaC" + bytes([0x80, 0, 0, 34]) + info + b"".join(p.data for p in packets))
    proc = subprocess.run(["ffmpeg", "-v", "error", "-i", str(out), "-f", "s16le", "-"], capture_output=True)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr.decode()
    assert proc.stdout == pcm.tobytes(), "ffmpeg's decode of the packets differs from the array"
    assert enc.input_samples == len(proc.stdout) // 4, "the samples the encoder was given, as ffmpeg decodes them back"


def test_opus_from_numpy_states_its_cookie_and_delay() -> None:
    enc = mediakit.Encoder("opus", "s16", 48000, "stereo", bitrate=96_000)
    head = enc.extradata
    assert head[:8] == b"OpusHead" and head[9] == 2
    assert int.from_bytes(head[10:12], "little") == enc.encoder_delay > 0
    assert enc.frame_size == 960 and enc.time_base == (1, 48000)
    packets = enc.encode(music(48000)) + enc.flush()
    assert sum(p.duration for p in packets) >= 48000 + enc.encoder_delay


def test_transcode_writes_an_aac_m4a_ffprobe_reads(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "sample.m4a"
    mediakit.transcode(sample, out, bitrate=96_000, sample_rate=44100, channels=1)
    proc = subprocess.run(["ffprobe", "-v", "error", "-print_format", "json", "-show_streams", str(out)], capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    s = json.loads(proc.stdout)["streams"][0]
    assert (s["codec_name"], int(s["sample_rate"]), int(s["channels"])) == ("aac", 44100, 1)


def test_a_rate_opus_refuses_names_the_rates_it_takes(tmp_path: Path) -> None:
    with pytest.raises(mediakit.MediaError) as e:
        mediakit.Encoder("opus", "s16", 44100, "stereo", sample_rate=44100)
    assert "8000, 12000, 16000, 24000, 48000" in str(e.value)


def test_transcode_passes_opus_settings_as_ffmpeg_does(tmp_path: Path) -> None:
    """application, frame_duration and complexity reach libopus: on the same 48 kHz samples (a
    WAV, so that neither side decodes or resamples) the packets equal those of ffmpeg's libopus
    encoder given the same settings (-application voip -frame_duration 40 -compression_level 5),
    byte for byte, each 40 ms long."""
    sample, ours, ref = tmp_path / "in.wav", tmp_path / "ours.opus", tmp_path / "ref.opus"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=f=330:d=3:r=48000", "-f", "lavfi",
                    "-i", "anoisesrc=a=0.05:r=48000:d=3:seed=3", "-filter_complex", "amix=inputs=2,pan=stereo|c0=c0|c1=c0",
                    "-c:a", "pcm_s16le", sample], check=True)
    mediakit.transcode(sample, ours, bitrate=32_000, application="voip", frame_duration=0.04, complexity=5)
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", sample, "-map", "0:a:0", "-c:a", "libopus", "-b:a", "32k",
                    "-application", "voip", "-frame_duration", "40", "-compression_level", "5", ref], check=True)

    def packets(path: Path) -> list[list[str]]:
        out = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:a:0", "-c", "copy", "-f", "framemd5", "-"],
                             check=True, capture_output=True, text=True).stdout
        return [line.split(",")[2:] for line in out.splitlines() if line and not line.startswith("#")]

    mine = packets(ours)
    assert mine == packets(ref) and len(mine) > 10
    assert {int(p[1]) for p in mine[:-1]} == {1920}
