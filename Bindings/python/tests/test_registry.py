"""The registry listings as data (C mk_container_get_info, the encoder and converter fields of
mk_backend_info, mk_backend_converts): ``mediakit.containers()``, ``Backend.sample_formats`` ...,
``Backend.converts()``.

Oracles (ORACLES.md: ffmpeg / ffprobe):
  containers  every extension a muxer lists writes a file that ffprobe reads as that container
              (its format_name), and every demuxer that lists an extension of a file in
              ../shared/media opens it, as ffprobe names the same file's container.
  encoders    `ffmpeg -h encoder=E` for the libavcodec encoder each plugin wraps: its
              "Supported sample rates", "Supported sample formats" (the FFmpeg plugin's in
              FFmpeg's order of preference) and "Supported channel layouts".
  converters  `ffmpeg -pix_fmts`: libswscale takes a format as input ("I") or output ("O").
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import mediakit

# ffprobe's format_name for each container name of the catalogue.
FFPROBE_FORMATS = {"mp4": "mov,mp4,m4a,3gp,3g2,mj2", "matroska": "matroska,webm", "webm": "matroska,webm", "ogg": "ogg", "opus": "ogg",
                   "ivf": "ivf", "mp3": "mp3", "aac": "aac", "wav": "wav", "flac": "flac", "aiff": "aiff", "caf": "caf",
                   "mpegts": "mpegts", "h264": "h264", "hevc": "hevc", "obu": "obu", "ac3": "ac3", "eac3": "eac3",
                   "dts": "dts", "amr": "amr", "hls": "hls", "srt": "srt", "webvtt": "webvtt"}
# The libavcodec encoder each plugin's encoder wraps.
FFMPEG_ENCODERS = {("ffmpeg", "aac"): "aac", ("ffmpeg", "flac"): "flac", ("ffmpeg", "mp3"): "libmp3lame",
                   ("opus", "opus"): "libopus", ("vorbis", "vorbis"): "libvorbis"}
LAYOUT_MASKS = {"mono": 0x4, "stereo": 0x3}


def ffprobe_format(path: Path) -> str:
    """ffprobe's format_name; "" when ffprobe cannot read the file."""
    return subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=format_name", "-of", "default=nw=1:nk=1",
                           str(path)], capture_output=True, text=True).stdout.strip()


def test_every_muxer_extension_writes_its_container(sample: Path, shared_media: Path, tmp_path: Path) -> None:
    muxers = [c for c in mediakit.containers() if c.kind == "muxer" and not c.plugin]   # plugin ones: below
    assert {c.name for c in muxers} >= {"mp4", "matroska", "webm", "ogg", "opus", "flac", "mp3"}
    flac = tmp_path / "tone.flac"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=0.5", str(flac)], check=True)
    pcm = tmp_path / "tone.aiff"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=0.5", "-c:a", "pcm_s16be", str(pcm)],
                   check=True)
    sources = {"mp4": sample, "matroska": sample, "webm": shared_media / "mka_opus_5p1.mka",
               "ogg": shared_media / "ogg_opus_stereo_tiny_155b.opus", "opus": shared_media / "ogg_opus_stereo_tiny_155b.opus",
               "flac": flac, "mp3": shared_media / "mp3_mpeg1_44k_stereo_vbr_xing_9s.mp3", "wav": pcm, "aiff": pcm, "caf": pcm,
               "mpegts": sample, "hls": sample, "srt": shared_media / "breadth" / "vtt_shaka-proj_034a2c_chapters.vtt",
               "webvtt": shared_media / "breadth" / "mkv_androidx_9d9030_full_blocks.mkv"}   # the subtitle writers take a text track
    for c in muxers:
        assert c.extensions and c.mime_types and c.description and c.codecs, c
        for ext in c.extensions:
            out = tmp_path / f"out.{ext}"
            mediakit.remux(sources[c.name], out)
            assert ffprobe_format(out) == FFPROBE_FORMATS[c.name], f"{c.name}: .{ext} is read by ffprobe as {ffprobe_format(out)}"


def test_the_frame_sinks_are_listed_and_decode_writes_each(sample: Path, tmp_path: Path) -> None:
    """The raw outputs of ``decode`` (kind "frame_sink") come after the muxers; each one, chosen
    as ``decode``'s wav / y4m arguments choose it, writes a file of its listed extension that
    ffprobe reads as that format (raw PCM and raw pictures: as many bytes as ffmpeg's own
    -f s16le / -f rawvideo output of the same decode)."""
    listing = mediakit.containers()
    kinds = [c.kind for c in listing]
    assert kinds == sorted(kinds, key=["demuxer", "muxer", "frame_sink"].index), kinds
    sinks = {c.name: c for c in listing if c.kind == "frame_sink"}
    assert set(sinks) == {"pcm", "wav", "rawvideo", "y4m"}
    for c in sinks.values():
        assert c.extensions and c.description and not c.codecs and not c.options, c
    wav, y4m = tmp_path / f"a.{sinks['wav'].extensions[0]}", tmp_path / f"v.{sinks['y4m'].extensions[0]}"
    mediakit.decode(sample, audio_out=wav, video_out=y4m, wav=True, y4m=True, max_video_frames=3, max_audio_seconds=0.5)
    assert ffprobe_format(wav) == "wav" and ffprobe_format(y4m) == "yuv4mpegpipe"
    pcm, raw = tmp_path / f"a.{sinks['pcm'].extensions[0]}", tmp_path / f"v.{sinks['rawvideo'].extensions[0]}"
    mediakit.decode(sample, audio_out=pcm, video_out=raw, pixel_format="i420", max_video_frames=3, max_audio_seconds=0.5)
    ref_pcm, ref_raw = tmp_path / "ref.pcm", tmp_path / "ref.yuv"
    subprocess.run(["ffmpeg", "-v", "error", "-i", str(sample), "-map", "0:a:0", "-t", "0.5", "-f", "s16le", str(ref_pcm),
                    "-map", "0:v:0", "-frames:v", "3", "-f", "rawvideo", "-pix_fmt", "yuv420p", str(ref_raw)], check=True)
    assert raw.stat().st_size == ref_raw.stat().st_size
    assert pcm.stat().st_size == ref_pcm.stat().st_size


def test_every_demuxer_opens_the_files_of_its_extensions(shared_media: Path, tmp_path: Path) -> None:
    """The real files of ../shared/media, and a WAV, a FLAC, an AIFF and a CAF file made by ffmpeg (the folder has none)."""
    demuxers = [c for c in mediakit.containers() if c.kind == "demuxer" and not c.plugin]
    by_ext: dict[str, mediakit.ContainerFormat] = {}
    for c in demuxers:
        assert c.extensions and c.mime_types and c.description, c
        for ext in c.extensions:
            by_ext.setdefault(ext, c)
    made = [tmp_path / "tone.wav", tmp_path / "tone.flac", tmp_path / "tone.aiff", tmp_path / "tone.caf"]
    for out in made:
        subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=0.5", str(out)], check=True)
    opened: set[str] = set()
    for path in sorted(shared_media.iterdir()) + made:
        found = by_ext.get(path.suffix.lstrip(".").lower())
        if found is None or found.name in opened:
            continue
        c = found
        if ffprobe_format(path) != FFPROBE_FORMATS[c.name]:
            continue     # a damaged or mislabelled file: not this test's subject
        with mediakit.open(path) as demuxer:
            assert demuxer.container == c.name, f"{path.name}: opened as {demuxer.container}, listed as {c.name}'s"
        opened.add(c.name)
    assert opened >= {"mp4", "matroska", "ogg", "wav", "flac", "mp3", "aac", "ivf", "aiff", "caf"}, f"only {opened} were exercised"


def test_plugin_demuxers_are_listed_and_chosen_by_name(sample: Path, shared_media: Path) -> None:
    """The FFmpeg plugin's libavformat demuxers follow the built-in ones in ``containers()``,
    named "ffmpeg:format"; ``open(..., demuxer=)`` (C mk_demuxer_open_as) reads with the one
    named, from a path, bytes or a file object. Oracle: ffprobe's format_name and packet count
    for the breadth folder's AVI file (a container only the plugin reads)."""
    listing = [c for c in mediakit.containers() if c.kind == "demuxer"]
    builtin = [c.name for c in listing if not c.plugin]
    plugin = [c for c in listing if c.plugin]
    assert builtin and plugin, "the built-in and the FFmpeg plugin's demuxers are listed"
    assert listing.index(plugin[0]) == len(builtin), "the plugins' demuxers come after the built-in ones"
    assert all(c.plugin == "ffmpeg" and c.name.startswith("ffmpeg:") for c in plugin)
    avi_format = next(c for c in plugin if c.name == "ffmpeg:avi")
    assert "avi" in avi_format.extensions

    avi = shared_media / "breadth" / "avi_meta-pytor_133ba9_testsrc2_mpeg4.avi"
    assert ffprobe_format(avi) == "avi"
    want = int(subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets",
                               "-of", "csv=p=0", str(avi)], capture_output=True, text=True, check=True).stdout.split()[0])
    for source in (avi, avi.read_bytes()):
        for name in ("ffmpeg:avi", "avi", None):
            with mediakit.open(source, demuxer=name) as d:
                assert d.container == "avi"
                assert sum(1 for _ in d) == want, name

    with open(sample, "rb") as f, mediakit.open(f, demuxer="mp4") as d:
        assert d.container == "mp4"
        packets = [(p.track, p.pts, p.size) for p in d]
    with mediakit.open(sample) as d:
        assert packets == [(p.track, p.pts, p.size) for p in d], "the named built-in demuxer reads as the probed one"
    with mediakit.open(sample, demuxer="ffmpeg:mp4") as d:
        assert d.container.startswith("mov,mp4") and sum(1 for _ in d) == len(packets)
    with pytest.raises(mediakit.NotFoundError, match="no-such-demuxer"):
        mediakit.open(sample, demuxer="no-such-demuxer")
    with pytest.raises(mediakit.MediaKitError):
        mediakit.open(sample, demuxer="matroska")
    with pytest.raises(ValueError):
        mediakit.open(sample, "w", demuxer="mp4")  # type: ignore[call-overload]  # the runtime refusal


def test_mp3_and_adts_files_open_as_ffprobe_names_them_with_or_without_an_id3_tag(shared_media: Path) -> None:
    """Every MP3 and ADTS file of ../shared/media that ffprobe reads as "mp3" or "aac" opens
    as that container, those behind an ID3v2 tag included (both carry one; the frames after
    the tag decide, as in FFmpeg's probe)."""
    checked: dict[str, int] = {}
    tagged: set[str] = set()
    for path in sorted(shared_media.iterdir()):
        if path.suffix.lower() not in (".mp3", ".aac"):
            continue
        name = ffprobe_format(path)
        if name not in ("mp3", "aac"):
            continue     # damaged beyond ffprobe's reading: not this test's subject
        with mediakit.open(path) as demuxer:
            assert demuxer.container == name, f"{path.name}: opened as {demuxer.container}, ffprobe reads {name}"
        checked[name] = checked.get(name, 0) + 1
        if path.read_bytes()[:3] == b"ID3":
            tagged.add(name)
    assert checked.get("mp3", 0) >= 5 and checked.get("aac", 0) >= 2, checked
    assert tagged == {"mp3", "aac"}, f"files behind an ID3v2 tag exercised: {tagged}"


def ffmpeg_encoder_help(name: str) -> dict[str, list[str]]:
    out = subprocess.run(["ffmpeg", "-hide_banner", "-h", f"encoder={name}"], capture_output=True, text=True).stdout
    return {m.group(1): m.group(2).split() for m in re.finditer(r"Supported (sample rates|sample formats|channel layouts): (.*)", out)}


def test_encoder_capabilities_equal_ffmpeg_encoder_help() -> None:
    encoders = [b for b in mediakit.backends() if b.kind == "encoder"]
    checked = 0
    for b in encoders:
        name = FFMPEG_ENCODERS.get((b.plugin, b.codec))
        if name is None:
            continue
        ref = ffmpeg_encoder_help(name)
        formats = ref.get("sample formats", [])
        if b.plugin == "ffmpeg":
            assert list(b.sample_formats) == formats, f"{b.codec}: {b.sample_formats}, ffmpeg -h encoder={name}: {formats}"
        else:
            assert set(b.sample_formats) == set(formats), f"{b.codec}: {b.sample_formats}, ffmpeg -h encoder={name}: {formats}"
        rates = [int(r) for r in ref.get("sample rates", [])]
        assert sorted(b.sample_rates) == sorted(rates), f"{b.codec}: rates {b.sample_rates}, ffmpeg's {name}: {rates}"
        if not rates:
            low, high = b.sample_rate_range
            assert 0 < low <= 8000 and high >= 192000, f"{b.codec}: takes any rate, yet the range is {b.sample_rate_range}"
        layouts = ref.get("channel layouts", [])
        if layouts:
            assert list(b.channel_masks) == [LAYOUT_MASKS[x] for x in layouts], f"{b.codec}: masks {b.channel_masks}, {layouts}"
            assert b.max_channels == len(layouts)
        else:
            assert b.channel_masks == () and b.max_channels >= 2
        if b.codec == "flac":
            assert b.bit_rate_range is None, "FLAC is lossless: no bit rate to ask for"
        else:
            assert b.bit_rate_range is not None and 0 < b.bit_rate_range[0] < 64000 < b.bit_rate_range[1]
        checked += 1
    assert checked >= 3, f"only {checked} encoders compared with ffmpeg's"
    for b in mediakit.backends():
        if b.kind != "encoder":
            assert b.sample_formats == () and b.sample_rates == () and b.max_channels == 0 and b.bit_rate_range is None


def test_converter_queries_equal_libswscale() -> None:
    lines = subprocess.run(["ffmpeg", "-hide_banner", "-pix_fmts"], capture_output=True, text=True).stdout.splitlines()
    flags = {parts[1]: parts[0] for parts in (line.split() for line in lines) if len(parts) >= 2 and len(parts[0]) == 5}
    converters = [b for b in mediakit.backends() if b.kind == "picture_converter" and b.name == "swscale"]
    assert converters, "the FFmpeg plugin's swscale converter is not loaded"
    swscale = converters[0]
    assert swscale.scales, "libswscale scales"
    names = ["yuv420p", "yuvj420p", "yuv422p", "yuv444p", "nv12", "yuv420p10le", "p010le", "gray", "gray10le"]
    for src in names:
        for dst in names:
            expected = flags[src][0] == "I" and flags[dst][1] == "O"
            assert swscale.converts(src, dst) == expected, f"{src} -> {dst}"
    with pytest.raises(mediakit.InvalidArgumentError):
        swscale.converts("rgb48", "nv12")
    decoder = next(b for b in mediakit.backends() if b.kind == "decoder")
    with pytest.raises(mediakit.InvalidArgumentError, match="not a picture converter"):
        decoder.converts("yuv420p", "nv12")


def test_plugin_muxers_follow_the_built_in_ones_and_write_what_ffmpeg_writes(sample: Path, tmp_path: Path) -> None:
    """The FFmpeg plugin's libavformat muxers (plugin ABI 2.5) come after the built-in ones in
    ``containers()``, named "ffmpeg:NAME"; ``remux`` to an .flv (no built-in writer) writes the
    packets `ffmpeg -c copy` writes (framemd5 of both read back)."""
    muxers = [c for c in mediakit.containers() if c.kind == "muxer"]
    plugin = [i for i, c in enumerate(muxers) if c.plugin]
    assert plugin and plugin == list(range(plugin[0], len(muxers))), [c.name for c in muxers][:30]
    names = {c.name for c in muxers if c.plugin}
    assert {"ffmpeg:flv", "ffmpeg:avi", "ffmpeg:mp4"} <= names and all(n.startswith("ffmpeg:") for n in names)
    ours, theirs = tmp_path / "ours.flv", tmp_path / "theirs.flv"
    mediakit.remux(sample, ours)
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(sample), "-map", "0", "-c", "copy", str(theirs)], check=True)

    def framemd5(path: Path) -> list[str]:
        out = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-map", "0", "-c", "copy", "-f", "framemd5", "-"],
                             capture_output=True, check=True, text=True).stdout
        return [line for line in out.splitlines() if not line.startswith("#software")]

    assert framemd5(ours) == framemd5(theirs)
