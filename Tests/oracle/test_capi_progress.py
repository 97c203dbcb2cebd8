"""Progress callbacks and cancel of the C API's long calls (mk_remux, mk_decode_file,
mk_transcode), mk_remux's track choice and the registry listings as structured data (issue 18),
through Tests/c/progress_test.c.

Oracles:
  ffmpeg       `ffmpeg -i SRC -map 0:T -c copy -f framemd5 -` equals the framemd5 of mk_remux's
               output of track T alone; the packet count ffprobe reads for T is the number of
               progress calls and their final done / total; ffprobe's duration is the decode's
               total in milliseconds (its longest stream, edit lists ignored); the decoded PCM holds the samples the edit list presents.
  the folder   a cancelled call (the callback returns non-zero) returns MK_ECANCELLED and leaves
               nothing in the output folder: no file under the target name, no temporary file.
  the plugins  a junk file in MEDIAKIT_PLUGIN_PATH is listed as a load failure naming it, the
               folder among the searched places; the decoder backends listed equal the plugins'
               "codec:priority" lists of mk_plugin_get_info.
"""

from __future__ import annotations

import json
import os

import oracle_lib as lib
from test_capi import SAMPLE, _build, _libdir

PROGRESS_C = lib.REPO / "Tests" / "c" / "progress_test.c"
TRACK = 1


def _framemd5(args: list) -> list[str]:
    cmd = ["ffmpeg", "-v", "error", *args, "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return [l for l in proc.stdout.decode().splitlines() if not l.startswith("#software")]


def test_progress_cancel_track_choice_and_registry(mk_bin, tmp_path):
    program = _build(PROGRESS_C, tmp_path / "progress_test", _libdir(mk_bin))
    work, bogus = tmp_path / "work", tmp_path / "bogus"
    work.mkdir()
    bogus.mkdir()
    junk = bogus / "libMediaKitPluginJunk.so"
    junk.write_bytes(b"not an ELF file")
    env = dict(os.environ, MEDIAKIT_PLUGIN_PATH=str(bogus))
    cmd = [program, SAMPLE, work, TRACK]
    proc = lib.run(cmd, env=env)
    lib.check_ok(proc, cmd, who="progress_test")
    lines = [json.loads(l) for l in proc.stdout.decode().splitlines()]
    calls = {l["call"]: l for l in lines if "call" in l}

    # mk_remux of one chosen track, into MP4 and Matroska, with progress.
    count = lib.run(["ffprobe", "-v", "error", "-select_streams", str(TRACK), "-count_packets", "-show_entries",
                     "stream=nb_read_packets", "-of", "csv=p=0", SAMPLE])
    packets = int(count.stdout.decode().strip())
    for name in ("chosen.mp4", "chosen.mkv"):
        c = calls[name]
        assert c["status"] == "MK_OK", c
        assert c["calls"] == packets and c["done"] == c["total"] == packets and c["fraction"] == 1 and c["monotonic"], c
        streams = lib.ffprobe_json(work / name)["streams"]
        assert len(streams) == 1, f"{name}: {len(streams)} streams, one was chosen"
    assert _framemd5(["-i", work / "chosen.mp4"]) == _framemd5(["-i", SAMPLE, "-map", f"0:{TRACK}"])
    hashes = lambda lines: [l.split(",")[5].strip() for l in lines if not l.startswith("#")]
    assert hashes(_framemd5(["-i", work / "chosen.mkv"])) == hashes(_framemd5(["-i", SAMPLE, "-map", f"0:{TRACK}"]))

    # Cancels and refusals leave nothing; a 0.1 settings struct copies every track.
    assert calls["remux-cancel"]["status"] == "MK_ECANCELLED" and calls["remux-cancel"]["calls"] == 3
    assert calls["remux-bad-track"]["status"] == "MK_EINVAL"
    assert calls["remux-old-struct"]["status"] == "MK_OK"
    assert len(lib.ffprobe_json(work / "old-settings.mp4")["streams"]) == len(lib.ffprobe_json(SAMPLE)["streams"])
    assert calls["muxer-open-with-progress"]["status"] == "MK_EINVAL"
    assert calls["decode-cancel"]["status"] == "MK_ECANCELLED" and calls["decode-cancel"]["calls"] == 2
    assert calls["transcode-cancel"]["status"] == "MK_ECANCELLED" and calls["transcode-cancel"]["calls"] == 1
    assert calls["encoder-open-with-progress"]["status"] == "MK_EINVAL"
    left = sorted(p.name for p in work.iterdir())
    assert left == ["chosen.mkv", "chosen.mp4", "decoded.nv12", "decoded.pcm", "old-settings.mp4", "transcoded.flac"], left

    # mk_decode_file's progress: milliseconds of media, never back, up to ffprobe's duration.
    d = calls["decode"]
    assert d["status"] == "MK_OK" and d["monotonic"] and d["fraction"] == 1 and d["done"] == d["total"], d
    duration = max(float(s["duration"]) for s in lib.ffprobe_json(SAMPLE, ignore_editlist=True)["streams"])
    assert abs(d["total"] - duration * 1000) <= 1, f"total {d['total']} ms, ffprobe's longest stream {duration} s"
    channels = next(int(s["channels"]) for s in lib.ffprobe_json(SAMPLE)["streams"] if s["codec_type"] == "audio")
    presented = lib.presented_audio_samples(SAMPLE)
    assert (work / "decoded.pcm").stat().st_size == presented * channels * 2, "the PCM is not the edit list's samples"
    t = calls["transcode"]
    assert t["status"] == "MK_OK" and t["monotonic"] and t["fraction"] == 1 and t["calls"] > 1, t
    assert lib.ffprobe_json(work / "transcoded.flac")["streams"][0]["codec_name"] == "flac"

    # The registry as structured data.
    failures = [l for l in lines if "failure" in l]
    assert [f["path"] for f in failures] == [str(junk)] and failures[0]["message_length"] > 0
    searched = [l["searched"] for l in lines if "searched" in l]
    assert str(bogus) in searched
    backends = [l for l in lines if "backend" in l]
    assert [b["backend"] for b in backends] == list(range(len(backends)))
    assert {b["kind"] for b in backends} == {1, 2, 3}, "decoders, encoders and a picture converter"
    for kind in (1, 2, 3):
        priorities = [b["priority"] for b in backends if b["kind"] == kind]
        assert priorities == sorted(priorities, reverse=True), f"kind {kind} is not by priority"
    plugins = [l for l in lines if "plugin" in l and "codecs" in l]
    listed = {(p["plugin"], c) for p in plugins for c in p["codecs"].split(",") if c}
    structured = {(b["plugin"], f"{b['codec']}:{b['priority']}") for b in backends if b["kind"] == 1}
    assert structured == listed
    paths = {p["plugin"]: p["path"] for p in plugins}
    assert all(b["plugin_path"] == paths[b["plugin"]] for b in backends)
    assert calls["backend-small-struct"]["status"] == "MK_EINVAL" and calls["backend-out-of-range"]["status"] == "MK_EINVAL"
