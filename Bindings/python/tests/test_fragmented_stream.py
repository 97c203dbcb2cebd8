"""A fragmented MP4 from a Python pipe (issue 28, item 8): `mediakit.open` on a file object that
cannot seek (a subprocess's stdout) reads the moof / mdat pairs as they come.

Inputs: made here by ffmpeg (H.264 with B-frames + AAC, `-movflags frag_keyframe+empty_moov`
and `-movflags cmaf`). Oracles: ffprobe reading the same bytes from a pipe (packets: pts, dts,
duration, size, pos, key flag; ffprobe's N/A durations and the duration of each track's last
packet are left out, as in
Tests/oracle/test_fragmented_pipe.py: FFmpeg 5.1 reports the last AAC packet of ffmpeg's
fragmented files as 1024 where the trun states 512, from a file as from a pipe), and ffmpeg's
decode of the file (`-map 0:v:0 -fps_mode passthrough -f rawvideo -pix_fmt nv12 -`, bit-exact).
"""
import subprocess
from pathlib import Path
from typing import BinaryIO, Iterator, cast

import pytest

import mediakit

_SOURCE = ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-f", "lavfi", "-i",
           "sine=frequency=440:sample_rate=48000", "-t", "3", "-c:v", "libx264", "-g", "25", "-bf", "2",
           "-c:a", "aac"]
LAYOUTS = {"frag_keyframe_empty_moov": ["-movflags", "frag_keyframe+empty_moov"], "cmaf": ["-movflags", "cmaf"]}


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def fragmented(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    layout: str = request.param
    out: Path = tmp_path_factory.mktemp("fragmented") / f"{layout}.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", *_SOURCE, *LAYOUTS[layout], str(out)], check=True)
    return out


class _Pipe:
    """`cat FILE` as a subprocess: its stdout is a pipe, a file object that cannot seek."""

    def __init__(self, path: Path):
        self.proc = subprocess.Popen(["cat", str(path)], stdout=subprocess.PIPE)
        assert self.proc.stdout is not None and not self.proc.stdout.seekable()
        # A pipe's file object: binary, readable, not seekable (mediakit.open's BinaryIO).
        self.stdout = cast(BinaryIO, self.proc.stdout)

    def __enter__(self) -> "_Pipe":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stdout.close()
        self.proc.wait()


def _without_last_durations(rows: list[list[str]]) -> list[list[str]]:
    last = {r[0]: i for i, r in enumerate(rows)}
    return [r[:3] + (["*"] if last[r[0]] == i else r[3:4]) + r[4:] for i, r in enumerate(rows)]


def _ffprobe_pipe(path: Path) -> list[list[str]]:
    with open(path, "rb") as f:
        out = subprocess.run(["ffprobe", "-v", "error", "-ignore_editlist", "1", "-show_entries",
                              "packet=stream_index,pts,dts,duration,size,pos,flags", "-of", "csv=p=0", "-"],
                             stdin=f, check=True, capture_output=True, text=True).stdout
    return [l.split(",")[:6] + ["K" if l.split(",")[6].startswith("K") else "_"] for l in out.splitlines() if l.strip()]


def _rows(packets: Iterator[mediakit.Packet]) -> list[list[str]]:
    return [[str(p.track), str(p.pts), str(p.dts), str(p.duration) if p.duration else "N/A", str(p.size),
             str(p.position), "K" if p.is_keyframe else "_"] for p in packets]


def test_packets_from_a_pipe_equal_ffprobes(fragmented: Path) -> None:
    with _Pipe(fragmented) as pipe, mediakit.open(pipe.stdout) as d:
        ours = _rows(iter(d))
    ref = _ffprobe_pipe(fragmented)
    assert len(ours) == len(ref)
    # Where ffprobe prints N/A (libavformat sets no duration on a fragment's sample without a
    # successor in its index: Tests/oracle/remux_lib.blank_na_durations), the column is not compared.
    ours = [o[:3] + ["*"] + o[4:] if r[3] == "N/A" else o for o, r in zip(ours, ref)]
    ref = [r[:3] + ["*"] + r[4:] if r[3] == "N/A" else r for r in ref]
    assert _without_last_durations(ours) == _without_last_durations(ref)


def test_one_track_from_a_pipe_decodes_like_ffmpeg(fragmented: Path) -> None:
    ref = subprocess.run(["ffmpeg", "-v", "error", "-i", str(fragmented), "-map", "0:v:0", "-fps_mode", "passthrough",
                          "-f", "rawvideo", "-pix_fmt", "nv12", "-"], check=True, capture_output=True).stdout
    with _Pipe(fragmented) as pipe, mediakit.open(pipe.stdout) as d:
        track = d.streams.video[0]
        with mediakit.DecodeSession(track) as dec:
            frames = [f.to_numpy("nv12").tobytes() for p in d.packets(track) for f in dec.decode(p)]
            frames += [f.to_numpy("nv12").tobytes() for f in dec.flush()]
        # One pass: the other track's packets were passed over, so asking for them is an error.
        with pytest.raises(mediakit.MediaError) as e:
            d.read_track(d.streams.audio[0])
        assert e.value.name == "MK_EUNSUPPORTED" and "seekable source" in e.value.message
    assert b"".join(frames) == ref


def test_decode_session_on_a_pipe_and_seek_refused(fragmented: Path) -> None:
    ref = subprocess.run(["ffmpeg", "-v", "error", "-i", str(fragmented), "-map", "0:v:0", "-fps_mode", "passthrough",
                          "-f", "rawvideo", "-pix_fmt", "nv12", "-"], check=True, capture_output=True).stdout
    with _Pipe(fragmented) as pipe, mediakit.open(pipe.stdout) as d:
        with pytest.raises(mediakit.MediaError) as e:
            d.seek(1.0)
        assert e.value.name == "MK_EUNSUPPORTED" and "needs a seekable source" in e.value.message
        frames = [f.to_numpy("nv12").tobytes() for f in d.decode(video=0)]
    assert b"".join(frames) == ref
