"""Encoders and mk-transcode (issue 15) against FFmpeg 5.1 and other parsers.

Input: a generated music-like signal (mixed sines with vibrato + pink noise, stereo, 48 kHz
s16, 10 s) written by ffmpeg's lavfi generators.

For each encoder (AAC from libavcodec's `aac`, Opus from libopus, Vorbis from libvorbisenc,
MP3 from libmp3lame through libavcodec, FLAC from libavcodec):
  ffprobe OUT                       codec, rate, channels, duration asked for
  ffmpeg -i OUT -f f32le -          decodes without error
  decoded length                    mk-decode OUT: exactly the input's length (gapless); ffmpeg:
                                    the input's where the container's trims reach it (FLAC,
                                    Opus in Matroska, MP3 with its LAME tag), else the same length as ffmpeg's own
                                    encode in the same container (FFmpeg 5.1 keeps MP4's last
                                    frame whole)
  FLAC                              ffmpeg's decode is bit-exact with the input
  SNR                               decode(encode(x)) against x within 1 dB of ffmpeg encoding x
                                    with the same library and settings (-c:a aac -b:a 128k,
                                    -c:a libopus -b:a 96k, -c:a libvorbis -q:a 5,
                                    -c:a libmp3lame -b:a 192k); both decoded by ffmpeg
  MP4 outputs                       mediainfo and gst-discoverer-1.0 open them
Errors: a rate Opus does not take and more channels than MP3 has name what the encoder
accepts; an interrupted transcode leaves no file under the target name (and no temporary).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

import oracle_lib as lib
import remux_lib as rlib

RATE = 48000
SECONDS = 10
CHANNELS = 2

# name: (our output name, mk-transcode arguments, ffmpeg's reference output, ffmpeg encoder args,
#        ffprobe codec, whether ffmpeg's decode of ours must be exactly the input's length)
CASES = {
    "aac": ("out.m4a", ["--bitrate", "128k"], "ref.m4a", ["-c:a", "aac", "-b:a", "128k"], "aac", False),
    "opus": ("out.mka", ["--codec", "opus", "--bitrate", "96k"], "ref.mka", ["-c:a", "libopus", "-b:a", "96k"], "opus", True),
    "opus-mp4": ("out.mp4", ["--codec", "opus", "--bitrate", "96k"], "ref.mp4", ["-c:a", "libopus", "-b:a", "96k"], "opus", False),
    "vorbis": ("out.webm", ["--codec", "vorbis", "--quality", "5"], "ref.webm", ["-c:a", "libvorbis", "-q:a", "5"], "vorbis", False),
    "mp3": ("out.mp4", ["--codec", "mp3", "--bitrate", "192k"], "ref.mp4", ["-c:a", "libmp3lame", "-b:a", "192k"], "mp3", False),
    "flac": ("out.flac", [], "ref.flac", ["-c:a", "flac"], "flac", True),
    "mp3-file": ("out.mp3", ["--bitrate", "192k"], "ref.mp3", ["-c:a", "libmp3lame", "-b:a", "192k"], "mp3", True),
    "opus-ogg": ("out.opus", ["--bitrate", "96k"], "ref.opus", ["-c:a", "libopus", "-b:a", "96k"], "opus", True),
    "vorbis-ogg": ("out.ogg", ["--quality", "5"], "ref.ogg", ["-c:a", "libvorbis", "-q:a", "5"], "vorbis", True),
}



def make_music(out: Path, seconds: int = SECONDS, rate: int = RATE) -> Path:
    """Mixed sines (a chord, one with vibrato) and pink noise, stereo s16 WAV."""
    sines = ("aevalsrc='0.20*sin(2*PI*220*t)+0.15*sin(2*PI*277.18*t+0.3*sin(2*PI*5*t))"
             "+0.12*sin(2*PI*329.63*t)+0.05*sin(2*PI*1760*t)|0.18*sin(2*PI*220*t+0.5)"
             f"+0.15*sin(2*PI*415.3*t)+0.10*sin(2*PI*659.26*t)':s={rate}:d={seconds}")
    noise = f"anoisesrc=c=pink:a=0.08:r={rate}:d={seconds}:seed=7"
    cmd = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", sines, "-f", "lavfi", "-i", noise,
           "-filter_complex", "[1]pan=stereo|c0=c0|c1=c0[n];[0][n]amix=inputs=2:normalize=0",
           "-ar", str(rate), "-c:a", "pcm_s16le", out]
    lib.oracle_ok(lib.run(cmd), cmd)
    return out


@pytest.fixture(scope="module")
def music(tmp_path_factory) -> Path:
    return make_music(tmp_path_factory.mktemp("encode") / "music.wav")


def decode_f32(path: Path) -> np.ndarray:
    """ffmpeg's decode of PATH as float samples, (frames, channels); fails the test on an error."""
    cmd = ["ffmpeg", "-v", "error", "-i", path, "-f", "f32le", "-ac", str(CHANNELS), "-"]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd, who="ffmpeg decoding our file")
    assert not proc.stderr.strip(), f"ffmpeg reported errors decoding {path.name}:\n{lib.tail(proc.stderr)}"
    return np.frombuffer(proc.stdout, dtype="<f4").reshape(-1, CHANNELS)


def snr_db(ref: np.ndarray, test: np.ndarray) -> float:
    n = min(len(ref), len(test))
    err = ref[:n].astype(np.float64) - test[:n].astype(np.float64)
    return 10 * np.log10(np.sum(ref[:n].astype(np.float64) ** 2) / max(np.sum(err ** 2), 1e-20))


@pytest.fixture(scope="module")
def encoded(music: Path, mk_transcode: Path, tmp_path_factory):
    """name -> (our file, ffmpeg's reference file), made once per case."""
    made: dict[str, tuple[Path, Path]] = {}

    def get(name: str) -> tuple[Path, Path]:
        if name not in made:
            ours_name, args, ref_name, ff_args, _, _ = CASES[name]
            folder = tmp_path_factory.mktemp(f"enc-{name}")
            ours, ref = folder / ours_name, folder / ref_name
            cmd = [mk_transcode, music, ours, "--quiet", *args]
            lib.check_ok(lib.run(cmd), cmd)
            cmd = ["ffmpeg", "-v", "error", "-y", "-i", music, *ff_args, ref]
            lib.oracle_ok(lib.run(cmd), cmd)
            made[name] = (ours, ref)
        return made[name]
    return get


@pytest.mark.parametrize("name", list(CASES))
def test_ffprobe_reads_codec_rate_channels_duration(name, encoded):
    ours, _ = encoded(name)
    cmd = ["ffprobe", "-v", "error", "-print_format", "json", "-show_streams", "-show_format", ours]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    info = json.loads(proc.stdout)
    audio = [s for s in info["streams"] if s.get("codec_type") == "audio"]
    assert len(audio) == 1, f"{ours.name}: {len(audio)} audio streams"
    s = audio[0]
    assert s["codec_name"] == CASES[name][4]
    assert int(s["sample_rate"]) == RATE and int(s["channels"]) == CHANNELS, s
    duration = float(s.get("duration") or info["format"]["duration"])
    # Within one codec frame of the input (Matroska states the last block's end).
    assert abs(duration - SECONDS) <= 0.05, f"{ours.name}: ffprobe duration {duration}, input {SECONDS} s"


@pytest.mark.parametrize("name", list(CASES))
def test_decoded_length_is_the_input_length(name, encoded, mk_decode, tmp_path):
    ours, ref = encoded(name)
    pcm = tmp_path / "ours.pcm"
    cmd = [mk_decode, ours, "--audio-out", pcm]
    lib.check_ok(lib.run(cmd), cmd)
    frames = pcm.stat().st_size // (2 * CHANNELS)
    if name != "vorbis":   # Vorbis in WebM has no end trim (Ogg granules have it)
        assert frames == RATE * SECONDS, f"mk-decode {ours.name}: {frames} samples, input {RATE * SECONDS}"
    theirs = len(decode_f32(ours))
    if CASES[name][5]:
        assert theirs == RATE * SECONDS, f"ffmpeg decodes {theirs} samples of {ours.name}, input {RATE * SECONDS}"
    else:
        reference = len(decode_f32(ref))
        assert theirs == reference, (f"ffmpeg decodes {theirs} samples of {ours.name} and {reference} of its own "
                                     f"encode {ref.name} (input {RATE * SECONDS})")


def test_flac_round_trip_is_bit_exact(encoded, music):
    ours, _ = encoded("flac")
    got = lib.run(["ffmpeg", "-v", "error", "-i", ours, "-f", "s16le", "-"]).stdout
    want = lib.run(["ffmpeg", "-v", "error", "-i", music, "-f", "s16le", "-"]).stdout
    assert len(got) == len(want), f"{len(got)} bytes decoded, input {len(want)}"
    assert got == want, lib.compare_bytes_exact(got, want, "FLAC round trip")
    if shutil.which("flac"):
        proc = lib.run(["flac", "-t", ours])
        assert proc.returncode == 0, f"flac -t: {lib.tail(proc.stderr)}"


@pytest.mark.parametrize("name", ["aac", "opus", "vorbis", "mp3", "mp3-file", "opus-ogg", "vorbis-ogg"])
def test_snr_within_1db_of_ffmpeg_with_the_same_library(name, encoded, music):
    ours, ref = encoded(name)
    x = decode_f32(music)
    ours_snr, ref_snr = snr_db(x, decode_f32(ours)), snr_db(x, decode_f32(ref))
    print(f"{name}: SNR ours {ours_snr:.2f} dB, ffmpeg {ref_snr:.2f} dB")
    assert ours_snr >= ref_snr - 1.0, f"{name}: SNR {ours_snr:.2f} dB, ffmpeg's {ref_snr:.2f} dB"


@pytest.mark.parametrize("name", ["aac", "opus-mp4", "mp3"])
def test_mp4_outputs_open_in_mediainfo_and_gstreamer(name, encoded):
    ours, _ = encoded(name)
    for tool in ("mediainfo", "gst-discoverer-1.0"):
        if not shutil.which(tool):
            pytest.fail(f"{tool} is not installed (scripts/deps.sh installs it)", pytrace=False)
    cmd = ["mediainfo", "--Output=JSON", ours]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    tracks = json.loads(proc.stdout)["media"]["track"]
    kinds = [t.get("@type") for t in tracks]
    assert "Audio" in kinds, f"mediainfo found no audio track in {ours.name}: {kinds}"
    ok, text = rlib.discover(ours)
    assert ok, f"gst-discoverer-1.0 failed on {ours.name}:\n{lib.tail(text)}"


@pytest.mark.parametrize("name", ["opus-ogg", "vorbis-ogg"])
def test_ogg_outputs_pass_opusinfo_ogginfo_and_gstreamer(name, encoded):
    """The Ogg muxer's encoded files: opusinfo / ogginfo (opus-tools, vorbis-tools) print no
    warning or error, and gst-discoverer-1.0 opens them."""
    ours, _ = encoded(name)
    streams = lib.ffprobe_json(ours)["streams"]
    problems = rlib.ogg_tool_problems(ours, streams)
    assert not problems, f"{ours.name}: {problems}"


def test_aac_m4a_has_itunsmpb_that_ffprobe_reads(encoded):
    """The gapless tag as iTunes writes it: ffprobe shows it as a format tag."""
    ours, _ = encoded("aac")
    cmd = ["ffprobe", "-v", "error", "-print_format", "json", "-show_format", ours]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    tags = json.loads(proc.stdout)["format"].get("tags", {})
    smpb = tags.get("iTunSMPB")
    assert smpb, f"no iTunSMPB tag in {ours.name}: {tags}"
    fields = [int(f, 16) for f in smpb.split()]
    assert fields[1] == 1024, f"priming {fields[1]}: libavcodec's aac encoder delays by 1024 (initial_padding)"
    assert fields[3] == RATE * SECONDS, f"sample count {fields[3]}"
    assert (fields[1] + fields[2] + fields[3]) % 1024 == 0, f"priming + padding + samples {smpb} not whole frames"


@pytest.mark.parametrize("args, accepted", [
    (["--codec", "opus", "--sample-rate", "44100"], "8000, 12000, 16000, 24000, 48000"),
    (["--codec", "mp3", "--channels", "6"], "1 to 2 channels"),
])
def test_encoder_errors_name_what_it_accepts(args, accepted, music, mk_transcode, tmp_path):
    out = tmp_path / ("out.mka" if "opus" in args else "out.mp4")
    proc = lib.run([mk_transcode, music, out, *args])
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode != 0, "the transcode succeeded"
    assert accepted in err, f"the error does not name what the encoder accepts ({accepted}):\n{err}"
    assert not out.exists() and not list(tmp_path.glob(".*")), f"files left: {os.listdir(tmp_path)}"


def test_interrupted_transcode_leaves_no_file(music, mk_transcode, tmp_path):
    # 240 s of the music, looped by stream copy (generating it anew takes ~10 s).
    long = tmp_path / "long.wav"
    cmd = ["ffmpeg", "-v", "error", "-y", "-stream_loop", "-1", "-i", music, "-t", "240", "-c", "copy", long]
    lib.oracle_ok(lib.run(cmd), cmd)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "long.m4a"
    proc = subprocess.Popen([str(mk_transcode), str(long), str(out), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while time.time() < deadline and not list(out_dir.iterdir()):
        time.sleep(0.02)   # wait until the temporary file exists: the transcode is writing
    time.sleep(0.2)
    assert proc.poll() is None, "the transcode finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0, "an interrupted transcode reported success"
    assert not out.exists(), f"{out.name} exists after the interruption"
    assert not list(out_dir.iterdir()), f"left behind: {os.listdir(out_dir)}"


def _mk_decoded_frames(mk_decode: Path, path: Path, channels: int, tmp_path: Path) -> int:
    pcm = tmp_path / f"{path.name}.pcm"
    cmd = [mk_decode, path, "--audio-out", pcm, "--channels", str(channels)]
    lib.check_ok(lib.run(cmd), cmd)
    return pcm.stat().st_size // (2 * channels)


def _video_framemd5(path: Path) -> list[str]:
    cmd = ["ffmpeg", "-v", "error", "-i", path, "-map", "0:v", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return [l.split(",")[-1].strip() for l in proc.stdout.decode().splitlines() if not l.startswith("#")]


def test_copy_video_keeps_the_video_packets_and_reencodes_the_audio(shared_media, mk_transcode, mk_decode, tmp_path):
    src = shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4"
    out = tmp_path / "copy.mp4"
    cmd = [mk_transcode, src, out, "--copy-video", "--quiet", "--bitrate", "96k"]
    lib.check_ok(lib.run(cmd), cmd)
    theirs, ours = _video_framemd5(src), _video_framemd5(out)
    assert ours == theirs, f"the video packets differ ({len(ours)} against {len(theirs)})"
    streams = lib.ffprobe_json(out, ignore_editlist=False)["streams"]
    assert sorted(s["codec_name"] for s in streams) == ["aac", "h264"]
    assert _mk_decoded_frames(mk_decode, out, 2, tmp_path) == _mk_decoded_frames(mk_decode, src, 2, tmp_path)
    ok, text = rlib.discover(out)
    assert ok, f"gst-discoverer-1.0 failed on {out.name}:\n{lib.tail(text)}"


@pytest.mark.parametrize("name, out_name, args, channels", [
    ("mp3_mpeg1_44k_stereo_vbr_xing_9s.mp3", "mp3.m4a", [], 2),
    ("ogg_vorbis_stereo_1s.ogg", "vorbis.flac", [], 2),
    ("mp4_two_aac_5p1_audio_tracks.mp4", "surround.mka", ["--codec", "opus"], 6),
    ("m4a_aac_8k_mono.m4a", "mono.mp4", ["--codec", "mp3"], 1),
])
def test_real_files_transcode_gapless(name, out_name, args, channels, shared_media, mk_transcode, mk_decode, tmp_path):
    """The decoded length of the output is the decoded length of the input (both by mk-decode,
    whose gapless lengths the decode tests check against ffmpeg), and ffmpeg decodes the output."""
    src = shared_media / name
    out = tmp_path / out_name
    cmd = [mk_transcode, src, out, "--quiet", *args]
    lib.check_ok(lib.run(cmd), cmd)
    assert _mk_decoded_frames(mk_decode, out, channels, tmp_path) == _mk_decoded_frames(mk_decode, src, channels, tmp_path)
    proc = lib.run(["ffmpeg", "-v", "error", "-i", out, "-f", "null", "-"])
    assert proc.returncode == 0 and not proc.stderr.strip(), f"ffmpeg: {lib.tail(proc.stderr)}"


@pytest.mark.parametrize("out_name, args", [("six.mka", ["--codec", "opus"]), ("six.webm", ["--codec", "vorbis"]),
                                            ("six.m4a", []), ("six.flac", [])])
def test_surround_channels_keep_their_places(out_name, args, mk_transcode, tmp_path):
    """5.1 with one tone per channel (WAVE order FL FR FC LFE BL BR): ffmpeg's decode of the
    output has each tone in its channel (Opus multistream and Vorbis are coded in Vorbis order
    and reordered back by the decoder, as for ffmpeg's own libopus / libvorbis output)."""
    tones = [300, 500, 700, 90, 1100, 1300]
    src = tmp_path / "six.wav"
    expr = "|".join(f"0.3*sin(2*PI*{f}*t)" for f in tones)
    cmd = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"aevalsrc='{expr}':s=48000:d=2:c=5.1", "-c:a", "pcm_s16le", src]
    lib.oracle_ok(lib.run(cmd), cmd)
    out = tmp_path / out_name
    cmd = [mk_transcode, src, out, "--quiet", *args]
    lib.check_ok(lib.run(cmd), cmd)
    proc = lib.run(["ffmpeg", "-v", "error", "-i", out, "-f", "f32le", "-ac", "6", "-"])
    lib.check_ok(proc, ["ffmpeg", out], who="ffmpeg")
    a = np.frombuffer(proc.stdout, dtype="<f4").reshape(-1, 6)[4800:52800]
    freqs = np.fft.rfftfreq(len(a), 1 / 48000)
    found = [int(round(freqs[np.argmax(np.abs(np.fft.rfft(a[:, c])))])) for c in range(6)]
    assert found == tones, f"{out_name}: the tones per channel are {found}, the input's {tones}"


def _packets(path: Path) -> list[tuple[int, int]]:
    """ffprobe's (duration, size) of every audio packet."""
    cmd = ["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "packet=duration,size", "-of", "json", path]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return [(int(p["duration"]), int(p["size"])) for p in json.loads(proc.stdout)["packets"]]


def _packet_md5s(path: Path) -> list[str]:
    """The MD5 of every audio packet's bytes, as ffmpeg's framemd5 of a stream copy gives them."""
    cmd = ["ffmpeg", "-v", "error", "-i", path, "-map", "0:a:0", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return [line.rsplit(",", 1)[1].strip() for line in proc.stdout.decode().splitlines() if line and not line.startswith("#")]


@pytest.mark.parametrize("ours, theirs", [
    (["--application", "voip", "--frame-duration", "40", "--complexity", "5", "--bitrate", "32k"],
     ["-application", "voip", "-frame_duration", "40", "-compression_level", "5", "-b:a", "32k"]),
    (["--application", "lowdelay", "--frame-duration", "10", "--bitrate", "64k"],
     ["-application", "lowdelay", "-frame_duration", "10", "-b:a", "64k"]),
    (["--frame-duration", "60", "--complexity", "0", "--bitrate", "96k"],
     ["-frame_duration", "60", "-compression_level", "0", "-b:a", "96k"]),
])
def test_opus_settings_give_ffmpegs_packets(ours, theirs, music, mk_transcode, tmp_path):
    """mk-transcode's Opus application, frame duration and complexity reach libopus as ffmpeg's
    -application, -frame_duration and -compression_level do: the same library with the same
    settings on the same samples writes the same packets, byte for byte, of the asked duration."""
    out, ref = tmp_path / "out.opus", tmp_path / "ref.opus"
    cmd = [mk_transcode, music, out, "--quiet", *ours]
    lib.check_ok(lib.run(cmd), cmd)
    cmd = ["ffmpeg", "-v", "error", "-y", "-i", music, "-c:a", "libopus", *theirs, ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    frame = int(float(ours[ours.index("--frame-duration") + 1]) * 48)
    durations = [d for d, _ in _packets(out)]
    assert set(durations[:-1]) == {frame}, f"packet durations {sorted(set(durations))}, {frame} asked"
    assert _packet_md5s(out) == _packet_md5s(ref)


def test_flac_in_ogg_has_the_final_streaminfo(music, mk_transcode, tmp_path):
    """FLAC in Ogg: the STREAMINFO in the first page is the encoder's final one, as in a .flac
    file: its total samples are the input's and its MD5 is the input's, which the reference
    decoder (`flac -t`, libFLAC, whose Ogg reader drops a page with a bad CRC) checks. (ogginfo
    is no oracle here: it warns of an "invalid zero size packet" in ffmpeg's Ogg FLAC too.)"""
    out = tmp_path / "out.oga"
    cmd = [mk_transcode, music, out, "--quiet", "--codec", "flac"]
    lib.check_ok(lib.run(cmd), cmd)
    data = out.read_bytes()
    at = data.index(b"\x7fFLAC") + 13 + 4           # "\x7FFLAC", version, header count, "fLaC", block header
    si = data[at:at + 34]
    total = int.from_bytes(si[13:18], "big") & ((1 << 36) - 1)
    assert total == SECONDS * RATE
    assert si[18:34] != bytes(16), "the STREAMINFO MD5 is unset"
    proc = lib.run(["flac", "-t", "--ogg", out])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    assert b"cannot check MD5" not in proc.stderr and b"ok" in proc.stderr, lib.tail(proc.stderr)
    proc = lib.run(["ffprobe", "-v", "error", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", out])
    lib.oracle_ok(proc, ["ffprobe", out])
    assert int(proc.stdout) == SECONDS * RATE
