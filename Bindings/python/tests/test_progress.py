"""Track choice and progress callbacks of the long calls (C mk_remux's tracks and progress,
mk_decode_file's and mk_transcode's progress), against ffmpeg / ffprobe (ORACLES.md): the
chosen tracks are the source's streams (framemd5 of -c copy, stream by stream), the remux
progress counts ffprobe's packets, the decode progress reaches ffprobe's duration; a callback
that returns False or raises stops the call and leaves nothing under the target names."""
from __future__ import annotations

from pathlib import Path

import pytest

import mediakit

from bindings_lib import ffprobe_json, framemd5

SOURCE = "mp4_h264_aac_moov_at_start_ctts_8s.mp4"


class Recorder:
    """A progress callback that keeps every call's (fraction, done, total)."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, int, int]] = []

    def __call__(self, fraction: float, done: int, total: int) -> None:
        self.calls.append((fraction, done, total))


def packet_lines(lines: list[str], stream: int) -> list[str]:
    """The packet lines of one stream of a framemd5, renumbered as stream 0."""
    return ["0," + line.split(",", 1)[1] for line in lines if line.startswith(f"{stream},")]


@pytest.mark.parametrize("output", ["out.mp4", "out.mkv"])
def test_remux_copies_the_tracks_chosen_in_their_order(output: str, shared_media: Path, tmp_path: Path) -> None:
    src, dst = shared_media / SOURCE, tmp_path / output
    with mediakit.open(src) as d:
        audio, video = d.streams.audio[0], d.streams.video[0]
    mediakit.remux(src, dst, tracks=[audio.index, video])          # an index and a Track
    streams = ffprobe_json(dst, "-show_streams")["streams"]
    assert [s["codec_type"] for s in streams] == ["audio", "video"]
    ours, theirs = framemd5(dst), framemd5(src)
    for out_index, source in enumerate((audio, video)):
        if output.endswith(".mp4"):
            assert packet_lines(ours, out_index) == packet_lines(theirs, source.index)
        else:   # Matroska times in milliseconds: the same packets (size, hash), retimed
            assert [line.split(",")[4:] for line in packet_lines(ours, out_index)] == \
                [line.split(",")[4:] for line in packet_lines(theirs, source.index)]
    mediakit.remux(src, tmp_path / "video.mp4", tracks=[video.index])
    assert [s["codec_type"] for s in ffprobe_json(tmp_path / "video.mp4", "-show_streams")["streams"]] == ["video"]
    with pytest.raises(mediakit.InvalidArgumentError):
        mediakit.remux(src, tmp_path / "bad.mp4", tracks=[7])
    with pytest.raises(ValueError):
        mediakit.remux(src, tmp_path / "none.mp4", tracks=[])
    assert not (tmp_path / "bad.mp4").exists() and not (tmp_path / "none.mp4").exists()


def test_remux_progress_counts_the_packets(shared_media: Path, tmp_path: Path) -> None:
    src = shared_media / SOURCE
    packets = len(ffprobe_json(src, "-show_packets")["packets"])
    recorder = Recorder()
    mediakit.remux(src, tmp_path / "out.mp4", progress=recorder)
    calls = recorder.calls
    assert calls and calls[-1] == (1.0, packets, packets)
    assert all(total == packets for _, _, total in calls)
    assert [done for _, done, _ in calls] == sorted(done for _, done, _ in calls)
    assert all(f == pytest.approx(done / total) for f, done, total in calls)


def test_remux_progress_of_an_input_without_a_packet_count(shared_media: Path, tmp_path: Path) -> None:
    """An MPEG-TS file does not say how many packets it holds: every call gives total -1 and
    fraction 0 (not a fraction over 1 of a made-up total), done counting ffprobe's packets."""
    src = shared_media / "breadth" / "ts_androidx_a24d4d_sample_h264_mpeg_audio.ts"
    packets = len(ffprobe_json(src, "-show_packets")["packets"])
    recorder = Recorder()
    mediakit.remux(src, tmp_path / "out.mp4", progress=recorder)
    assert [done for _, done, _ in recorder.calls] == list(range(1, packets + 1))
    assert {(f, total) for f, _, total in recorder.calls} == {(0.0, -1)}


def test_a_progress_callback_stops_the_call(shared_media: Path, tmp_path: Path) -> None:
    """False stops with CancelledError; an exception raised in the callback stops the call and
    comes out of it as it was raised; either way nothing is left in the output folder."""
    src = shared_media / SOURCE
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(mediakit.CancelledError) as stopped:
        mediakit.remux(src, out / "a.mp4", progress=lambda f, done, total: done < 100)
    assert stopped.value.name == "MK_ECANCELLED"

    def interrupted(fraction: float, done: int, total: int) -> bool:
        if fraction > 0.5:
            raise KeyboardInterrupt
        return True

    with pytest.raises(KeyboardInterrupt):
        mediakit.remux(src, out / "b.mp4", fragment=1.0, progress=interrupted)
    with pytest.raises(mediakit.CancelledError):
        mediakit.decode(src, audio_out=out / "a.pcm", video_out=out / "v.nv12", progress=lambda f, d, t: f < 0.3)
    with pytest.raises(ZeroDivisionError):
        mediakit.transcode(src, out / "a.m4a", progress=lambda f, d, t: bool(1 // 0))
    assert list(out.iterdir()) == []


def test_decode_and_transcode_progress_reach_the_end(shared_media: Path, tmp_path: Path) -> None:
    src = shared_media / SOURCE
    duration_ms = round(float(ffprobe_json(src, "-show_format")["format"]["duration"]) * 1000)
    recorder = Recorder()
    mediakit.decode(src, audio_out=tmp_path / "a.pcm", progress=recorder)
    decoded = recorder.calls
    assert decoded and decoded[-1][0] == 1.0
    assert abs(decoded[-1][1] - duration_ms) <= 50 and decoded[-1][1] == decoded[-1][2]
    assert [d for _, d, _ in decoded] == sorted(d for _, d, _ in decoded)
    transcoded = Recorder()
    mediakit.transcode(src, tmp_path / "a.m4a", progress=transcoded)
    coded = [f for f, _, _ in transcoded.calls]
    assert coded and coded == sorted(coded) and coded[-1] == 1.0
    assert (tmp_path / "a.m4a").exists()


def test_registry_listings(tmp_path: Path) -> None:
    """backends() agrees with plugins() (each decoder a plugin lists, at its priority);
    plugin_search_paths() names the folder of the library; a file that is not a plugin: given
    to load_plugins() itself, PluginError; found in a folder given to it, listed by
    plugin_failures() with its path, and the folder is a searched place."""
    listed = mediakit.backends()
    decoders = {(b.plugin, b.codec): b.priority for b in listed if b.kind == "decoder"}
    for plugin in mediakit.plugins():
        for codec, priority in plugin.codecs.items():
            assert decoders.get((plugin.name, codec)) == priority, (plugin.name, codec)
    assert any(b.codec == "h264" and b.media_type == "video" for b in listed if b.kind == "decoder")
    assert str(Path(mediakit.LIBRARY_PATH).resolve().parent) in {str(Path(p).resolve()) for p in mediakit.plugin_search_paths()}
    fake = tmp_path / "libMediaKitPluginFake.so"
    fake.write_bytes(b"\x7fELF not really")
    with pytest.raises(mediakit.PluginError) as refused:
        mediakit.load_plugins(fake)
    assert str(fake) in refused.value.message
    mediakit.load_plugins(tmp_path)
    assert str(tmp_path) in mediakit.plugin_search_paths()
    assert any(f.path == str(fake) and str(fake) in f.message for f in mediakit.plugin_failures())
