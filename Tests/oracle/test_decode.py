"""mk-decode (demuxer + FFmpeg plugin + core conversions) against ffmpeg on the same file.

Inputs: the generated files and every progressive MP4/MOV/M4A/QTA/3GP of ../shared/media.
Video is compared when the first video track is h264 or hevc in 8-bit 4:2:0
(yuv420p), or in 10-bit 4:2:0, 4:4:4, 4:2:2, gray or full range (yuv420p10le, yuv444p, yuv422p,
gray, yuvj420p, full-range yuv420p10le), which ffmpeg converts to NV12 / I420 with libswscale (full range becomes
limited) and mk-decode with the FFmpeg plugin's picture converter (the same libswscale,
set up as ffmpeg sets it up; rotation before conversion, as ffmpeg's autorotation does it); audio when the first audio track is aac,
mp3 or uncompressed (pcm_s16le/s16be/s24le/f32le in MOV: sowt, twos, in24, fl32, which
f32 output converts exactly as libswresample does). Any other file is skipped with the reason (codec, pixel format, encryption),
never passed.

Oracles (ORACLES.md, "Decoders: bit-exact output"); STREAM is the absolute index of
the first video (or audio) stream that is a track, which is ffmpeg's 0:v:0 (0:a:0)
except when ffmpeg lists cover art (attached_pic) streams before it:
  NV12  ffmpeg -v error [-ignore_editlist 1] -i FILE -map 0:STREAM -fps_mode passthrough -f rawvideo -pix_fmt nv12 -
        (with the edit list applied and an 8-bit 4:2:0 track: the I420 decode below, our NV12
        read with its UV plane split into U and V, since ffmpeg's nv12 output of such a track
        is its yuv420p planes repacked)
  I420  ffmpeg -v error -i FILE -map 0:STREAM -fps_mode passthrough -f rawvideo -pix_fmt yuv420p -
  Y4M   the I420 decode's frames (read once for both), and the header of
        ffmpeg -v error -i FILE -map 0:STREAM -fps_mode passthrough -frames:v 1 -f yuv4mpegpipe -pix_fmt yuv420p -
  PCM   ffmpeg -v error [-ignore_editlist 1] -i FILE -map 0:STREAM -f s16le -     (and -f f32le)
Rotation: like the ffmpeg CLI, mk-decode turns pictures upright by the track's display
matrix (90/180/270 degrees); test_video_no_autorotate compares --no-autorotate with
ffmpeg's -noautorotate on the rotated files.
Video must be byte-identical (same libavcodec on both sides). s16 audio must have the
same length and differ by at most 1 per sample: the float-to-s16 conversion may round
differently by one step (ORACLES.md). f32 audio involves no conversion and must be exact.
Without --no-trim both sides apply the edit list (ffmpeg's default); with --no-trim
ours must equal ffmpeg with -ignore_editlist 1 before -i.
"""

from __future__ import annotations

import io
import subprocess
import wave

import pytest

import oracle_lib as lib

MEDIA = lib.media_params()
VIDEO_CODECS = ("h264", "hevc")
VIDEO_PIX_FMTS = ("yuv420p", "yuv420p10le", "yuv444p", "yuv422p", "yuvj420p", "gray")
AUDIO_CODECS = ("aac", "mp3", "pcm_s16le", "pcm_s16be", "pcm_s24le", "pcm_f32le")
TRIM = [pytest.param(False, id="trim"), pytest.param(True, id="no-trim")]


# --------------------------------------------------------------------------- targets

def _first(media, kind: str) -> dict | None:
    return next((s for s in lib.track_streams(lib.ffprobe_json(media, ignore_editlist=False))
                 if s.get("codec_type") == kind), None)


def video_target(media) -> dict:
    """ffprobe's first video track stream, or skip saying why it is not compared."""
    s = _first(media, "video")
    if s is None:
        pytest.skip(f"{media.name}: no video track")
    codec, pix = s.get("codec_name") or s.get("codec_tag_string"), s.get("pix_fmt")
    if lib.is_encrypted(media):
        pytest.skip(f"{media.name}: encrypted (encv/enca sample entries); no keys to decode")
    if codec not in VIDEO_CODECS:
        pytest.skip(f"{media.name}: first video track is {codec}, not h264/hevc")
    if pix not in VIDEO_PIX_FMTS:
        pytest.skip(f"{media.name}: first video track is {codec} {pix}, "
                    f"not one of {', '.join(VIDEO_PIX_FMTS)}")
    return s


def audio_target(media) -> dict:
    """ffprobe's first audio track stream, or skip saying why it is not compared."""
    s = _first(media, "audio")
    if s is None:
        pytest.skip(f"{media.name}: no audio track")
    codec = s.get("codec_name") or s.get("codec_tag_string")
    if lib.is_encrypted(media):
        pytest.skip(f"{media.name}: encrypted (encv/enca sample entries); no keys to decode")
    if codec not in AUDIO_CODECS:
        pytest.skip(f"{media.name}: first audio track is {codec}, not {'/'.join(AUDIO_CODECS)}")
    return s


def decodable_audio(media) -> dict | None:
    """ffprobe's first audio track stream when audio_target would compare it, else None."""
    s = _first(media, "audio")
    if s is None or lib.is_encrypted(media) or (s.get("codec_name") or s.get("codec_tag_string")) not in AUDIO_CODECS:
        return None
    return s


# --------------------------------------------------------------------------- oracles

def ffmpeg_cmd(media, stream: dict, out_args: list, no_trim: bool = False, autorotate: bool = True) -> list:
    cmd = ["ffmpeg", "-v", "error", "-nostdin"]
    if no_trim:
        cmd += ["-ignore_editlist", "1"]
    if stream.get("codec_type") == "video" and not autorotate:
        cmd += ["-noautorotate"]
    cmd += ["-i", media, "-map", f"0:{stream['index']}"]
    if stream.get("codec_type") == "video":
        cmd += ["-fps_mode", "passthrough"]
    return cmd + out_args + ["-"]


def ffmpeg_bytes(cmd: list) -> bytes:
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return proc.stdout


def run_ours(cmd: list) -> subprocess.CompletedProcess:
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd, who="mk-decode")
    return proc


def _no_output(path, cmd) -> None:
    if not path.is_file():
        pytest.fail(f"`{lib.shell_line(cmd)}` exited 0 but wrote no {path.name}", pytrace=False)


# --------------------------------------------------------------------------- video

def _compare_raw_video(media, stream, ours_path, ref_cmd, layout, ours_cmd):
    w, h = int(stream["width"]), int(stream["height"])
    if "-noautorotate" not in ref_cmd and abs(lib.rotation_of(stream)) % 180 == 90:
        w, h = h, w  # ffmpeg (and mk-decode) turn the pictures a quarter turn
    _no_output(ours_path, ours_cmd)
    try:
        with open(ours_path, "rb") as ours, lib.ffmpeg_stream(ref_cmd) as ref:
            diff = lib.compare_video_stream(ours, ref, lib.yuv420_frame_size(w, h), w, h, layout)
    finally:
        ours_path.unlink(missing_ok=True)
    if diff:
        pytest.fail(f"{media.name}: `{lib.shell_line(ours_cmd)}` is not byte-identical to "
                    f"`{lib.shell_line(ref_cmd)}`\n{diff}", pytrace=False)


@pytest.mark.parametrize("media", MEDIA, indirect=True)
def test_video_nv12_no_trim(media, mk_decode, tmp_path):
    """First video track to NV12 with --no-trim (every coded picture, the edit list
    ignored), byte-identical to ffmpeg's. (The default trim is compared in
    test_video_nv12_i420_and_y4m, with the I420 and Y4M outputs.)

    Oracle: `ffmpeg -v error -ignore_editlist 1 -i FILE -map 0:STREAM -fps_mode passthrough
    -f rawvideo -pix_fmt nv12 -`.
    """
    stream = video_target(media)
    out = tmp_path / "out.nv12"
    cmd = [mk_decode, media, "--video-out", out, "--no-trim"]
    run_ours(cmd)
    ref = ffmpeg_cmd(media, stream, ["-f", "rawvideo", "-pix_fmt", "nv12"], no_trim=True)
    _compare_raw_video(media, stream, out, ref, "nv12", cmd)


@pytest.mark.parametrize("media", MEDIA, indirect=True)
def test_video_no_autorotate(media, mk_decode, tmp_path):
    """Rotated tracks with --no-autorotate: pictures as coded, byte-identical to ffmpeg's.

    Oracle: `ffmpeg -v error -noautorotate -i FILE -map 0:STREAM -fps_mode passthrough
    -f rawvideo -pix_fmt nv12 -`. Files whose first video track has no rotation are skipped.
    """
    stream = video_target(media)
    if lib.rotation_of(stream) == 0:
        pytest.skip(f"{media.name}: the video track has no display rotation")
    out = tmp_path / "out.nv12"
    cmd = [mk_decode, media, "--video-out", out, "--no-autorotate"]
    run_ours(cmd)
    ref = ffmpeg_cmd(media, stream, ["-f", "rawvideo", "-pix_fmt", "nv12"], autorotate=False)
    _compare_raw_video(media, stream, out, ref, "nv12", cmd)


_MATRICES = lib.QUARTER_TURN_MATRICES


@pytest.fixture(scope="module")
def matrix_clip(tmp_path_factory):
    """A 3-frame 96x64 H.264 clip (testsrc: no symmetry), video only, made by ffmpeg."""
    out = tmp_path_factory.mktemp("matrix") / "clip.mp4"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-f", "lavfi", "-i", "testsrc=size=96x64:rate=25",
           "-frames:v", "3", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-bf", "0", out]
    lib.oracle_ok(lib.run(cmd), cmd)
    return out.read_bytes()


@pytest.mark.parametrize("name", list(_MATRICES))
def test_video_display_matrix(name, matrix_clip, mk_decode, mk_probe, tmp_path):
    """Every quarter-turn display matrix, with and without a reflection: mk-decode turns the
    pictures as ffmpeg's autorotation does, and mk-probe reports the reflection.

    Input: the clip of `matrix_clip` with its tkhd matrix set to the case's a, b, c, d
    (ISO/IEC 14496-12 8.3.2; 16.16 fixed point). Oracles: `ffmpeg -v error -i FILE
    -f rawvideo -pix_fmt nv12 -` (byte-identical; FFmpeg 5.1 turns with transpose /
    hflip / vflip), and ffprobe's display matrix for `reflected`.
    """
    import json
    data, matrix = lib.with_display_matrix(matrix_clip, name)
    media = tmp_path / f"{name}.mp4"
    media.write_bytes(data)
    info = json.loads(lib.run(["ffprobe", "-v", "error", "-show_streams", "-of", "json", media]).stdout)
    stream = info["streams"][0]
    if name != "identity" and lib.display_matrix_of(stream) != matrix:
        pytest.fail(f"{name}: ffprobe reads the display matrix {lib.display_matrix_of(stream)}; "
                    f"the patched input is wrong", pytrace=False)
    probe = json.loads(lib.run([mk_probe, "--json", media]).stdout)
    if probe["tracks"][0]["reflected"] != lib.reflected_of(stream):
        pytest.fail(f"{name}: mk-probe says reflected={probe['tracks'][0]['reflected']}, "
                    f"ffprobe's matrix says {lib.reflected_of(stream)}", pytrace=False)
    out = tmp_path / "out.nv12"
    cmd = [mk_decode, media, "--video-out", out]
    run_ours(cmd)
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", media, "-f", "rawvideo", "-pix_fmt", "nv12", "-"]
    ref = ffmpeg_bytes(ref_cmd)
    if out.read_bytes() != ref:
        pytest.fail(f"{name}: `{lib.shell_line(cmd)}` is not byte-identical to "
                    f"`{lib.shell_line(ref_cmd)}` ({out.stat().st_size} vs {len(ref)} bytes; "
                    f"we turned the pictures as {probe['tracks'][0]['orientation']})", pytrace=False)


class _NV12AsI420:
    """Our NV12 stream read as I420 frames: the interleaved UV plane split into U and V. For an
    8-bit 4:2:0 source this is the whole difference between ffmpeg's `-pix_fmt nv12` and
    `-pix_fmt yuv420p` outputs (both the decoder's planes, repacked), so one ffmpeg decode can
    judge both of ours; any changed byte of ours is still a changed byte here."""

    def __init__(self, f, width: int, height: int) -> None:
        self._f, self._luma = f, width * height
        self._frame = lib.yuv420_frame_size(width, height)

    def read(self, n: int = -1) -> bytes:
        frame = lib.read_exact(self._f, self._frame)
        if len(frame) < self._frame:
            return frame   # a partial last frame: compared as it is (the sizes then differ)
        uv = frame[self._luma:]
        return frame[:self._luma] + uv[0::2] + uv[1::2]


@pytest.mark.parametrize("media", MEDIA, indirect=True)
def test_video_nv12_i420_and_y4m(media, mk_decode, tmp_path):
    """First video track, edit list applied (the default), to NV12, I420 (--pixel-format i420)
    and Y4M (--y4m): three mk-decode runs, each byte-identical to ffmpeg's. The NV12 run also
    writes the first decodable audio track (`--audio-out`), compared with the printed ffplay
    commands by _check_one_run, so the video is not decoded a second time for that check.

    One ffmpeg yuv420p decode, read once, judges the raw I420 frames, every Y4M frame payload
    (ffmpeg's yuv4mpegpipe output carries the same yuv420p frames as its rawvideo output: the
    same decoder and converter, only the framing differs) and, when the track is 8-bit 4:2:0
    (`yuv420p`), our NV12 frames with their UV plane split (_NV12AsI420: ffmpeg's nv12 output
    of such a track is its yuv420p planes repacked). Other pixel formats are converted by
    libswscale on both sides, where NV12 and yuv420p outputs need not be repackings of each
    other, so their NV12 is compared with ffmpeg's own `-pix_fmt nv12` decode.
    The Y4M header facts W, H, F (as a ratio), A (as a ratio), C (absent means 420jpeg, as the
    format says) and XCOLORRANGE must agree with the header ffmpeg's yuv4mpegpipe muxer writes;
    the header text may differ.

    Oracles: `ffmpeg -v error -i FILE -map 0:STREAM -fps_mode passthrough -f rawvideo -pix_fmt
    yuv420p -` (frames), the same with `-pix_fmt nv12` (NV12 of other pixel formats), and with
    `-frames:v 1 -f yuv4mpegpipe` (header).
    """
    stream = video_target(media)
    audio = decodable_audio(media)
    nv12, aout = tmp_path / "out.nv12", tmp_path / "out.pcm"
    cmd_nv12 = [mk_decode, media, "--video-out", nv12] + (["--audio-out", aout] if audio else [])
    proc = run_ours(cmd_nv12)
    if audio is not None:
        _check_one_run(media, proc, cmd_nv12, stream, audio, nv12, aout)
    _no_output(nv12, cmd_nv12)
    shared_nv12 = stream.get("pix_fmt") == "yuv420p"
    if not shared_nv12:
        ref = ffmpeg_cmd(media, stream, ["-f", "rawvideo", "-pix_fmt", "nv12"])
        _compare_raw_video(media, stream, nv12, ref, "nv12", cmd_nv12)
    i420, y4m = tmp_path / "out.i420", tmp_path / "out.y4m"
    cmd_i420 = [mk_decode, media, "--video-out", i420, "--pixel-format", "i420"]
    cmd_y4m = [mk_decode, media, "--video-out", y4m, "--y4m"]
    run_ours(cmd_i420)
    _no_output(i420, cmd_i420)
    run_ours(cmd_y4m)
    _no_output(y4m, cmd_y4m)
    header_cmd = ffmpeg_cmd(media, stream, ["-frames:v", "1", "-f", "yuv4mpegpipe", "-pix_fmt", "yuv420p"])
    ref_fields, _ = lib.y4m_reader(io.BytesIO(ffmpeg_bytes(header_cmd)))
    ref_cmd = ffmpeg_cmd(media, stream, ["-f", "rawvideo", "-pix_fmt", "yuv420p"])
    w, h = int(stream["width"]), int(stream["height"])
    if abs(lib.rotation_of(stream)) % 180 == 90:
        w, h = h, w  # ffmpeg (and mk-decode) turn the pictures a quarter turn
    problems = []
    try:
        with open(i420, "rb") as raw, open(y4m, "rb") as f, lib.ffmpeg_stream(ref_cmd) as ref, \
                open(nv12 if shared_nv12 else i420, "rb") as nv12_file:
            try:
                ours_fields, ours_frames = lib.y4m_reader(f)
            except ValueError as e:
                pytest.fail(f"{media.name}: our Y4M output does not parse: {e}", pytrace=False)
            a, b = lib.y4m_header_facts(ours_fields), lib.y4m_header_facts(ref_fields)
            problems += [f"`{lib.shell_line(cmd_y4m)}`: header {key}: ours {a[key]}, ffmpeg {b[key]} "
                         f"(`{lib.shell_line(header_cmd)}`)" for key in a if a[key] != b[key]]
            payloads = lib.Y4MPayloads(ours_frames)
            streams = {"i420": raw, "y4m": payloads}
            if shared_nv12:
                streams["nv12"] = _NV12AsI420(nv12_file, w, h)
            diffs = lib.compare_video_streams(streams, ref, lib.yuv420_frame_size(w, h), w, h, "i420")
            if payloads.error:
                problems.append(f"`{lib.shell_line(cmd_y4m)}`: our Y4M stream: {payloads.error}")
            cmds = {"i420": cmd_i420, "y4m": cmd_y4m, "nv12": cmd_nv12}
            problems += [f"`{lib.shell_line(cmds[k])}` is not byte-identical to `{lib.shell_line(ref_cmd)}`"
                         + (" (our NV12 read with its UV plane split into U and V)" if k == "nv12" else "")
                         + f"\n{d}" for k, d in diffs.items() if d]
    finally:
        for p in (i420, y4m, nv12):
            p.unlink(missing_ok=True)
    if problems:
        pytest.fail(f"{media.name}:\n  " + "\n  ".join(problems), pytrace=False)


# --------------------------------------------------------------------------- audio

def _gapless_reference(media, ref: bytes, stream: dict, bytes_per_sample: int, no_trim: bool) -> bytes:
    """ffmpeg's output cut where the file says the audio ends (lib.presented_audio_samples).

    FFmpeg 5.1 drops AAC priming but never cuts the last frame at the edit list's end (nor
    the iTunSMPB padding); MediaKit is gapless and stops at the stated end. The samples
    before that end are compared as they are; the cut must fall inside ffmpeg's last frame.
    """
    if no_trim:
        return ref
    presented = lib.presented_audio_samples(media, int(stream.get("sample_rate") or 0) or None)
    if presented is None:
        return ref
    frame = int(stream.get("channels") or 1) * bytes_per_sample
    keep = presented * frame
    # ffmpeg keeps the stated padding, which can be more than a frame; an HE-AAC frame is
    # 2048 samples at the output rate: a sanity bound of two such frames.
    if abs(len(ref) - keep) > 4096 * frame:
        pytest.fail(f"{media.name}: the file presents {presented} samples, ffmpeg wrote "
                    f"{len(ref) // frame}: more than two frames apart", pytrace=False)
    # When the decoder yields fewer samples than the container presents (libavcodec's AAC
    # decoder drops the first frame of libfaac streams), everything it yields is presented.
    return ref[:min(keep, len(ref))]


def _check_pcm(media, ours: bytes, ref: bytes, stream: dict, cmd: list, ref_cmd: list):
    diff = lib.compare_pcm_s16(ours, ref, int(stream.get("channels") or 1))
    if diff:
        pytest.fail(f"{media.name}: `{lib.shell_line(cmd)}` differs from "
                    f"`{lib.shell_line(ref_cmd)}` (s16le, {stream.get('channels')} ch, "
                    f"{stream.get('sample_rate')} Hz; allowed |diff| <= 1):\n{diff}",
                    pytrace=False)


@pytest.mark.parametrize("mode", ["gapless", "none", "ffmpeg"])
@pytest.mark.parametrize("media", MEDIA, indirect=True)
def test_audio_s16(media, mode, mk_decode, tmp_path):
    """First audio track to interleaved s16le: |diff| <= 1 per sample, ffmpeg's length.

    Oracle: `ffmpeg -v error [-ignore_editlist 1] -i FILE -map 0:STREAM -f s16le -`.
    --trim ffmpeg: ffmpeg's output exactly (same sample count). --no-trim: the same with
    -ignore_editlist 1. The default (gapless): ffmpeg's output cut where the file says the
    audio ends (edit list or iTunSMPB; see _gapless_reference: FFmpeg 5.1 keeps the whole
    last AAC frame). The tolerance of 1 is the float-to-s16 rounding step of ORACLES.md.
    """
    stream = audio_target(media)
    out = tmp_path / "out.pcm"
    cmd = [mk_decode, media, "--audio-out", out] + {"gapless": [], "none": ["--no-trim"],
                                                    "ffmpeg": ["--trim", "ffmpeg"]}[mode]
    run_ours(cmd)
    _no_output(out, cmd)
    ref_cmd = ffmpeg_cmd(media, stream, ["-f", "s16le"], mode == "none")
    ref = ffmpeg_bytes(ref_cmd)
    if mode == "gapless":
        ref = _gapless_reference(media, ref, stream, 2, False)
    _check_pcm(media, out.read_bytes(), ref, stream, cmd, ref_cmd)


@pytest.mark.parametrize("media", MEDIA, indirect=True)
def test_audio_f32(media, mk_decode, tmp_path):
    """First audio track as interleaved f32le (--sample-format f32): exactly ffmpeg's.

    Oracle: `ffmpeg -v error -i FILE -map 0:STREAM -f f32le -`. aac and mp3 decode to
    float planar in libavcodec, so f32 output is only interleaving: no tolerance. Integer
    PCM converts to float by one exact multiplication (x / 2^15, x / 2^31), on both sides.
    """
    stream = audio_target(media)
    out = tmp_path / "out.f32"
    cmd = [mk_decode, media, "--audio-out", out, "--sample-format", "f32"]
    run_ours(cmd)
    _no_output(out, cmd)
    ref_cmd = ffmpeg_cmd(media, stream, ["-f", "f32le"])
    ref = _gapless_reference(media, ffmpeg_bytes(ref_cmd), stream, 4, False)
    diff = lib.compare_bytes_exact(out.read_bytes(), ref, "f32le")
    if diff:
        pytest.fail(f"{media.name}: `{lib.shell_line(cmd)}` differs from "
                    f"`{lib.shell_line(ref_cmd)}`: {diff}", pytrace=False)


@pytest.mark.parametrize("media", MEDIA, indirect=True)
def test_audio_wav(media, mk_decode, tmp_path):
    """--wav output is a valid 16-bit PCM WAV with the track's rate and channels, and
    ffmpeg's samples.

    Oracles: Python's `wave` module (and a RIFF chunk walk, for WAVE_FORMAT_EXTENSIBLE
    that older `wave` versions refuse) for the header; `ffmpeg -v error -i FILE
    -map 0:STREAM -f s16le -` for the samples (|diff| <= 1).
    """
    stream = audio_target(media)
    out = tmp_path / "out.wav"
    cmd = [mk_decode, media, "--audio-out", out, "--wav"]
    run_ours(cmd)
    _no_output(out, cmd)
    data = out.read_bytes()
    rate, channels = int(stream["sample_rate"]), int(stream["channels"])
    problems = []
    try:
        fmt = lib.parse_wav(data)
    except ValueError as e:
        pytest.fail(f"{media.name}: --wav output is not a valid WAV file: {e}", pytrace=False)
    expect = dict(format=1, channels=channels, rate=rate, bits=16, block_align=2 * channels,
                  byte_rate=2 * channels * rate)
    for key, value in expect.items():
        if fmt[key] != value:
            problems.append(f"fmt {key}: {fmt[key]}, expected {value}")
    try:
        with wave.open(io.BytesIO(data)) as w:
            if (w.getnchannels(), w.getsampwidth(), w.getframerate()) != (channels, 2, rate):
                problems.append(f"wave module reads {w.getnchannels()} ch, "
                                f"{8 * w.getsampwidth()} bit, {w.getframerate()} Hz")
            if w.readframes(w.getnframes()) != fmt["data"]:
                problems.append("wave module reads other samples than the data chunk holds")
    except wave.Error as e:
        if "unknown format: 65534" not in str(e):  # extensible: older wave modules refuse it
            problems.append(f"wave module refuses the file: {e}")
    if problems:
        pytest.fail(f"{media.name}: `{lib.shell_line(cmd)}`:\n  " + "\n  ".join(problems),
                    pytrace=False)
    ref_cmd = ffmpeg_cmd(media, stream, ["-f", "s16le"])
    ref = _gapless_reference(media, ffmpeg_bytes(ref_cmd), stream, 2, False)
    _check_pcm(media, fmt["data"], ref, stream, cmd, ref_cmd)


# --------------------------------------------------------------------------- both at once

# ffplay options that only concern playback (ffprobe does not know them): flag -> takes a value
_FFPLAY_ONLY = {"-autoexit": False, "-nodisp": False, "-fs": False, "-an": False, "-vn": False,
                "-sn": False, "-noborder": False, "-alwaysontop": False, "-exitonkeydown": False,
                "-exitonmousedown": False, "-framedrop": False, "-infbuf": False,
                "-loop": True, "-window_title": True, "-x": True, "-y": True, "-left": True,
                "-top": True, "-volume": True, "-showmode": True, "-t": True, "-ss": True}


def check_ffplay_command(media, said: str, path, expect: dict) -> None:
    """mk-decode printed an ffplay command for `path`, and its input options describe it."""
    import json
    import shlex

    lines = [l for l in said.splitlines() if "ffplay" in l and str(path) in l]
    if not lines:
        pytest.fail(f"{media.name}: mk-decode printed no ffplay command for {path}:\n"
                    f"{lib.tail(said, 800)}", pytrace=False)
    line = lines[0][lines[0].index("ffplay"):].strip().rstrip("`")
    try:
        args = shlex.split(line)[1:]
    except ValueError as e:
        pytest.fail(f"{media.name}: cannot parse the printed command {line!r}: {e}", pytrace=False)
    kept, i = [], 0
    while i < len(args):
        if args[i] in _FFPLAY_ONLY:
            i += 2 if _FFPLAY_ONLY[args[i]] else 1
            continue
        kept.append(args[i])
        i += 1
    probe = ["ffprobe", "-v", "error", "-show_entries",
             "stream=codec_name,width,height,pix_fmt,sample_rate,channels", "-of", "json", *kept]
    proc = lib.run(probe)
    if proc.returncode != 0:
        pytest.fail(f"{media.name}: the printed command `{line}` would not play: ffprobe with "
                    f"the same options fails:\n{lib.tail(proc.stderr)}", pytrace=False)
    streams = json.loads(proc.stdout).get("streams") or [{}]
    got = {k: streams[0].get(k) for k in expect}
    if got != expect:
        pytest.fail(f"{media.name}: the printed command `{line}` describes {got}, "
                    f"the output is {expect}", pytrace=False)


def _check_one_run(media, proc, cmd, vstream, astream, vout, aout):
    """`mk-decode FILE --video-out X.nv12 --audio-out X.pcm` (test_video_nv12_i420_and_y4m's run, whose
    video it compares) wrote the audio too, equal to ffmpeg's, and printed an ffplay command that
    plays each output.

    Oracles: the s16le ffmpeg command of test_audio_s16 (gapless); for the printed ffplay
    commands, ffprobe run with the same input options (ffprobe and ffplay parse them the same
    way, e.g. both refuse `-pix_fmt` for rawvideo input and take `-pixel_format`) must read the
    track's size and pixel format, or its sample rate and channel count.
    """
    said = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    w, h = int(vstream["width"]), int(vstream["height"])
    if abs(lib.rotation_of(vstream)) % 180 == 90:
        w, h = h, w  # written upright, as ffmpeg's autorotation does
    check_ffplay_command(media, said, vout, {"codec_name": "rawvideo", "pix_fmt": "nv12",
                                             "width": w, "height": h})
    check_ffplay_command(media, said, aout, {"codec_name": "pcm_s16le",
                                             "sample_rate": str(astream["sample_rate"]),
                                             "channels": int(astream["channels"])})
    _no_output(aout, cmd)
    ref_cmd = ffmpeg_cmd(media, astream, ["-f", "s16le"])
    ref = _gapless_reference(media, ffmpeg_bytes(ref_cmd), astream, 2, False)
    _check_pcm(media, aout.read_bytes(), ref, astream, cmd, ref_cmd)


# --------------------------------------------------------------------------- gapless

@pytest.mark.parametrize("samples", [96123, 48000, 1024 * 30 + 1])
def test_aac_in_mp4_decodes_to_the_source_length(samples, mk_decode, tmp_path):
    """Gapless (issue 6): a 48 kHz source of known length, encoded to AAC-in-MP4 by ffmpeg,
    decodes (trimmed, the default) to exactly the source's sample count.

    Oracle: the source's own length (lavfi sine, atrim=end_sample=N).
    """
    src = tmp_path / "src.mp4"
    gen = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
           f"sine=f=440:sample_rate=48000,atrim=end_sample={samples}", "-c:a", "aac", src]
    assert lib.run(gen).returncode == 0
    out = tmp_path / "out.pcm"
    run_ours([mk_decode, src, "--audio-out", out])
    assert out.stat().st_size == samples * 2, f"{out.stat().st_size // 2} samples, the source had {samples}"


@pytest.mark.parametrize("samples", [96123, 48000, 31])
@pytest.mark.parametrize("container", ["opus", "mp4"])
def test_opus_decodes_to_the_source_length(samples, container, mk_decode, tmp_path):
    """Gapless (issue 6): a 48 kHz source of known length, encoded to Opus by ffmpeg (in Ogg,
    and in MP4 where the edit list carries pre-skip and length), decodes (trimmed, the
    default) to exactly the source's sample count.

    Oracle: the source's own length (lavfi sine, atrim=end_sample=N).
    """
    src = tmp_path / f"src.{container}"
    gen = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
           f"sine=f=440:sample_rate=48000,atrim=end_sample={samples}", "-c:a", "libopus", src]
    assert lib.run(gen).returncode == 0
    out = tmp_path / "out.pcm"
    run_ours([mk_decode, src, "--audio-out", out])
    assert out.stat().st_size == samples * 2, f"{out.stat().st_size // 2} samples, the source had {samples}"


@pytest.mark.parametrize("codec,container", [
    ("libopus", "opus"), ("libopus", "mp4"), ("libvorbis", "ogg"), ("libvorbis", "mp4"),
    ("libmp3lame", "mp4"), ("aac", "mp4"),
])
def test_trim_ffmpeg_equals_ffmpeg(codec, container, mk_decode, tmp_path):
    """`mk-decode --trim ffmpeg` gives ffmpeg's own sample count, |diff| <= 1 per sample, for
    each codec FFmpeg's demuxers trim differently: Opus (pre-skip in the decoder), Vorbis in
    MP4 (FFmpeg's mov demuxer drops every Vorbis packet that starts before the edit, whole,
    instead of cutting samples), MP3 and AAC (the edit's start cut to the sample).

    Oracle: `ffmpeg -v error [-c:a libopus|libvorbis] -i SRC -map 0:a:0 -f s16le -` (the same
    decoder library on both sides, ORACLES.md); SRC is an odd-length 48 kHz sine encoded
    by ffmpeg.
    """
    src = tmp_path / f"src.{container}"
    gen = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
           "sine=f=440:sample_rate=48000,atrim=end_sample=59256", "-c:a", codec, src]
    assert lib.run(gen).returncode == 0, lib.shell_line(gen)
    out = tmp_path / "out.pcm"
    cmd = [mk_decode, "-q", src, "--audio-out", out, "--trim", "ffmpeg"]
    run_ours(cmd)
    decoder = ["-c:a", codec] if codec in ("libopus", "libvorbis") else []
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", *decoder, "-i", src, "-map", "0:a:0", "-f", "s16le", "-"]
    ref = ffmpeg_bytes(ref_cmd)
    diff = lib.compare_pcm_s16(out.read_bytes(), ref, 1)
    if diff:
        pytest.fail(f"`{lib.shell_line(cmd)}` differs from `{lib.shell_line(ref_cmd)}` "
                    f"(s16le mono; allowed |diff| <= 1):\n{diff}", pytrace=False)
