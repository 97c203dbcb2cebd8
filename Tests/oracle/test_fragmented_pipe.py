"""Fragmented MP4 read from a pipe (issue 28, item 8): a stream read once, front to back.

A fragmented file is the MP4 layout made for streaming: its `moof`/`mdat` pairs are read as
they come, one fragment in memory at a time, from a source that cannot seek.

Inputs: fragmented files made here with ffmpeg (H.264 with B-frames + AAC: `frag_keyframe+
empty_moov`, `+default_base_moof`, `-movflags cmaf`, `frag_keyframe` alone (the first samples
in the moov, fragments after); each moof has two trafs, each track four moofs), and every fmp4_*/cmaf_*
file of ../shared/media (an init segment and its media segment concatenated, as
test_fragmented_demux.py does).

Oracles:
  packets   ffprobe -v error -ignore_editlist 1 -show_entries
            packet=stream_index,pts,dts,duration,size,pos,flags -of csv=p=0 - reading the same
            bytes from a pipe (FFmpeg reads a source it cannot seek in stored order), and per
            track the same ffprobe on the file (the packets from a pipe are the file's).
            Where ffprobe's duration is N/A the duration column is not compared (remux_lib).
  decode    ffmpeg -v error -i FILE -map 0:v:0 -fps_mode passthrough -f rawvideo -pix_fmt nv12 -
            (byte-identical) and -map 0:a:0 -f s16le - (|diff| <= 1, --trim ffmpeg: ffmpeg's length).
  seek      a pipe cannot seek: `mk-decode - --seek`, mk_demuxer_seek say so (the rule itself).
  memory    peak RSS (GNU time %M) of `mk-probe --count -` on 10 000 and on 50 000 fragments:
            the same within 1 MiB (one fragment in memory, not an index of all of them).
"""
from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib
import remux_lib as rlib

_SOURCE = ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-f", "lavfi", "-i",
           "sine=frequency=440:sample_rate=48000", "-t", "4", "-c:v", "libx264", "-g", "25", "-bf", "2",
           "-c:a", "aac"]
GENERATED = {
    "frag_keyframe_empty_moov": ["-movflags", "frag_keyframe+empty_moov"],
    "default_base_moof": ["-movflags", "frag_keyframe+empty_moov+default_base_moof"],
    "cmaf": ["-movflags", "cmaf"],
    "moov_samples_then_fragments": ["-movflags", "frag_keyframe"],
}
CASES = [f"gen:{n}" for n in GENERATED] + rlib.fragmented_params()


@pytest.fixture(scope="module")
def generated_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fragmented_pipe")


def _input(case: str, generated_dir: Path, tmp_path: Path, request) -> Path:
    if case.startswith("gen:"):
        name = case[4:]
        out = generated_dir / f"{name}.mp4"
        if not out.exists():
            cmd = ["ffmpeg", "-v", "error", "-y", *_SOURCE, *GENERATED[name], out]
            lib.oracle_ok(lib.run(cmd), cmd)
        return out
    return rlib.materialize(case, tmp_path, request)


def _piped(cmd: list, path: Path) -> subprocess.CompletedProcess:
    with open(path, "rb") as f:
        try:
            return subprocess.run([str(c) for c in cmd], stdin=f, capture_output=True, timeout=lib.CMD_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"timed out: {lib.shell_line(cmd)} < {path}")


def _ffprobe_pipe_packets(path: Path) -> list[str]:
    """ffprobe reading `path` from a pipe, in our CSV form (lib.expected_packets' rules)."""
    cmd = lib.ffprobe_packets_cmd(Path("-"))
    proc = _piped(cmd, path)
    lib.oracle_ok(proc, cmd)
    ranks = {s["index"]: i for i, s in enumerate(lib.track_streams(lib.ffprobe_json(path)))}
    lines = []
    for line in proc.stdout.decode().splitlines():
        fields = line.split(",")
        while len(fields) > 7 and fields[-1] == "":
            fields.pop()
        if len(fields) != 7 or int(fields[0]) not in ranks:
            continue
        flags = "K" if fields[6].startswith("K") else "_"
        lines.append(",".join([str(ranks[int(fields[0])])] + fields[1:6] + [flags]))
    return lines


def _blank_last_durations(ours: list[str], ref: list[str]) -> tuple[list[str], list[str]]:
    """The duration column of each track's last packet, blanked on both sides (see LAST_DURATION)."""
    def blank(lines):
        last = {l.split(",")[0]: i for i, l in enumerate(lines)}
        out = []
        for i, l in enumerate(lines):
            f = l.split(",")
            if last.get(f[0]) == i:
                f[3] = "*"
            out.append(",".join(f))
        return out
    return blank(ours), blank(ref)


# ffmpeg's own fragmented files: FFmpeg 5.1 reports the last packet of the AAC track with a
# duration of 1024 where the trun states 512, from the file as from a pipe, and MediaKit
# reports the trun's, from the file as from a pipe (checked here: the pipe gives the file's
# packets). A difference of the fragment reader itself (from a file too), not of reading from
# a pipe, reported separately; the last packet of each track is compared without its duration.
LAST_DURATION = "each track's last packet compared without duration (FFmpeg's end-of-fragment duration)"


def _comparable(path: Path, ours: list[str], ref: list[str]) -> tuple[list[str], list[str], str]:
    ours, ref, notes = rlib.blank_na_durations(ours, ref)
    if path.parent.name.startswith("fragmented_pipe"):
        ours, ref = _blank_last_durations(ours, ref)
        notes += "; " + LAST_DURATION
    special = rlib.SIZE_NOT_AS_STORED.get(path.name)
    if special:
        track, why = special
        def blank(lines):
            return [",".join(f[:4] + ["*"] + f[5:]) if f[0] == str(track) else ",".join(f)
                    for f in (l.split(",") for l in lines)]
        ours, ref = blank(ours), blank(ref)
        notes += f"; track {track} without sizes: {why}"
    return ours, ref, notes


def _by_track(lines: list[str]) -> list[str]:
    return sorted(lines, key=lambda l: int(l.split(",")[0]))   # stable: each track's own order


def _check_packets(path: Path, ours: list[str], who: str) -> None:
    """`ours` (packets read from a pipe) equals ffprobe's from a pipe, and per track its file's."""
    a, b, notes = _comparable(path, ours, _ffprobe_pipe_packets(path))
    diff = lib.diff_lines(a, b, who, "ffprobe (pipe)")
    if diff:
        pytest.fail(f"{path.name}: {who} differs from ffprobe reading the same pipe\n"
                    f"columns: track,pts,dts,duration,size,offset,flags\n{diff}"
                    + (f"\n({notes})" if notes else ""), pytrace=False)
    a, b, notes = _comparable(path, _by_track(ours), _by_track(lib.expected_packets(path)))
    diff = lib.diff_lines(a, b, who, "ffprobe (file)")
    if diff:
        pytest.fail(f"{path.name}: per track, {who} differs from ffprobe reading the file\n{diff}"
                    + (f"\n({notes})" if notes else ""), pytrace=False)


def _lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [l.strip() for l in proc.stdout.decode("utf-8", "replace").splitlines() if l.strip()]


@pytest.mark.parametrize("case", CASES)
def test_pipe_packets_equal_ffprobe(case, generated_dir, mk_probe, tmp_path, request):
    """`cat FILE | mk-probe --packets -` gives ffprobe's packets."""
    path = _input(case, generated_dir, tmp_path, request)
    cmd = [mk_probe, "--packets", "-"]
    proc = _piped(cmd, path)
    lib.check_ok(proc, cmd)
    _check_packets(path, _lines(proc), "mk-probe --packets -")
    from_file = lib.run([mk_probe, "--packets", path])
    lib.check_ok(from_file, [mk_probe, "--packets", path])
    assert _by_track(_lines(proc)) == _by_track(_lines(from_file)), "per track, the pipe's packets are not the file's"


@pytest.fixture(scope="module")
def io_packets(mk_bin, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("io_packets") / "io_packets"
    cmd = ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", lib.REPO / "Include",
           lib.REPO / "Tests" / "c" / "io_packets.c", "-L", mk_bin, "-lmediakit", f"-Wl,-rpath,{mk_bin}", "-o", out]
    proc = lib.run(cmd)
    assert proc.returncode == 0, f"building io_packets.c: {lib.tail(proc.stderr)}"
    return out


@pytest.mark.parametrize("case", [f"gen:{n}" for n in GENERATED])
def test_c_open_io_without_seek_gives_ffprobes_packets(case, generated_dir, io_packets, tmp_path, request):
    """mk_demuxer_open_io with a read callback only (Tests/c/io_packets.c on standard input)."""
    path = _input(case, generated_dir, tmp_path, request)
    proc = _piped([io_packets], path)
    lib.check_ok(proc, [io_packets])
    _check_packets(path, _lines(proc), "mk_demuxer_open_io (no seek)")


def test_c_seek_on_a_stream_says_it_needs_a_seekable_source(generated_dir, io_packets, tmp_path, request):
    path = _input("gen:cmaf", generated_dir, tmp_path, request)
    proc = _piped([io_packets, "seek", "1"], path)
    message = proc.stderr.decode()
    assert proc.returncode == 3, message
    assert message.startswith("MK_EUNSUPPORTED") and "needs a seekable source" in message, message


@pytest.mark.parametrize("case", [f"gen:{n}" for n in GENERATED])
def test_decode_from_a_pipe_equals_ffmpeg(case, generated_dir, mk_decode, tmp_path, request):
    """`cat FILE | mk-decode - --video-out X.nv12 --audio-out X.pcm --trim ffmpeg`."""
    path = _input(case, generated_dir, tmp_path, request)
    nv12, pcm = tmp_path / "out.nv12", tmp_path / "out.pcm"
    cmd = [mk_decode, "-", "-q", "--video-out", nv12, "--audio-out", pcm, "--trim", "ffmpeg"]
    proc = _piped(cmd, path)
    lib.check_ok(proc, cmd)
    ref_v = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough",
             "-f", "rawvideo", "-pix_fmt", "nv12", "-"]
    ref_a = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:a:0", "-f", "s16le", "-"]
    v, a = lib.run(ref_v), lib.run(ref_a)
    lib.oracle_ok(v, ref_v)
    lib.oracle_ok(a, ref_a)
    ours = nv12.read_bytes()
    frame = lib.yuv420_frame_size(320, 240)
    assert len(ours) == len(v.stdout), f"{len(ours) // frame} pictures, ffmpeg {len(v.stdout) // frame}"
    assert ours == v.stdout, "the pictures differ from ffmpeg's"
    ours_a = pcm.read_bytes()
    assert len(ours_a) == len(a.stdout), f"{len(ours_a)} bytes of PCM, ffmpeg {len(a.stdout)}"
    diff = lib.compare_pcm_s16(ours_a, a.stdout, 1)
    assert diff is None, diff


def test_seek_on_a_pipe_says_it_needs_a_seekable_source(generated_dir, mk_decode, tmp_path, request):
    path = _input("gen:default_base_moof", generated_dir, tmp_path, request)
    cmd = [mk_decode, "-", "-q", "--audio-out", tmp_path / "a.pcm", "--seek", "1"]
    proc = _piped(cmd, path)
    assert proc.returncode == 1, proc.stderr.decode()
    assert "needs a seekable source" in proc.stderr.decode(), proc.stderr.decode()


def test_moov_at_the_end_from_a_pipe_names_the_layout(mk_probe, tmp_path):
    """A progressive file whose moov follows its mdat still needs to go back: a clear error."""
    path = tmp_path / "moov_last.mp4"
    cmd = ["ffmpeg", "-v", "error", "-y", *_SOURCE, path]
    lib.oracle_ok(lib.run(cmd), cmd)
    proc = _piped([mk_probe, "--packets", "-"], path)
    message = proc.stderr.decode()
    assert proc.returncode == 1 and proc.stdout == b"", message
    assert "moov box comes after the media data" in message and "needs a seekable source" in message, message


def test_a_pipe_cut_inside_a_fragment_gives_the_packets_before_then_a_warning(generated_dir, mk_probe, tmp_path, request):
    """The stream ends in the middle of a fragment's media data: the packets read from a pipe are
    those read from the cut file (whose packets test_truncated_* check against ffprobe), and the
    same warning."""
    src = _input("gen:default_base_moof", generated_dir, tmp_path, request)
    data = src.read_bytes()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[:len(data) * 2 // 3])
    ref = lib.run([mk_probe, "--packets", cut])
    got = _piped([mk_probe, "--packets", "-"], cut)
    assert got.returncode == ref.returncode == 0, got.stderr.decode()
    assert _lines(got) == _lines(ref)
    assert "warning" in got.stderr.decode() and "warning" in ref.stderr.decode()


def _many_fragments(base: bytes, copies: int) -> bytes:
    """`base` (ftyp, moov, then moof/mdat pairs with default-base-is-moof and a tfdt each) with
    its fragments repeated `copies` times, each copy's decode times moved on by the base's
    duration: a longer stream of the same fragments, as live ingest would send them."""
    def boxes(start: int, end: int):
        while start + 8 <= end:
            size, kind = struct.unpack(">I4s", base[start:start + 8])
            yield kind.decode("latin-1"), start, size
            start += size
    head, fragments, tfdts = b"", [], []
    for kind, start, size in boxes(0, len(base)):
        if kind in ("ftyp", "moov"):
            head += base[start:start + size]
        elif kind in ("moof", "mdat"):
            fragments.append((kind, start, size))
    for kind, start, size in fragments:
        if kind != "moof":
            continue
        for k2, s2, n2 in boxes(start + 8, start + size):
            if k2 == "traf":
                for k3, s3, n3 in boxes(s2 + 8, s2 + n2):
                    if k3 == "tfdt":
                        assert base[s3 + 8] == 1, "tfdt version 1 expected"
                        tfdts.append(s3 + 12)
    times = [struct.unpack(">Q", base[p:p + 8])[0] for p in tfdts]
    step = times[-1] + (times[-1] - times[-2])
    body = bytearray(b"".join(base[s:s + n] for _, s, n in fragments))
    offset0 = fragments[0][1]
    out = bytearray(head)
    for copy in range(copies):
        for p, t in zip(tfdts, times):
            struct.pack_into(">Q", body, p - offset0, t + copy * step)
        out += body
    return bytes(out)


def _peak_rss_kib(cmd: list, path: Path) -> tuple[int, bytes]:
    proc = _piped(["/usr/bin/time", "-f", "peak %M", *cmd], path)
    lib.check_ok(proc, cmd)
    line = [l for l in proc.stderr.decode().splitlines() if l.startswith("peak ")][-1]
    return int(line.split()[1]), proc.stdout


def test_memory_does_not_grow_with_the_number_of_fragments(mk_probe, tmp_path):
    """`mk-probe --count -` holds one fragment: its peak RSS on 10 000 fragments and on 50 000 (of
    one frame each; both past the stream's 1 MiB window of bytes kept behind) is the same within
    1 MiB. Reading the 50 000 from the file, whose fragments are all indexed at the start, takes
    3.6 MiB more than the 10 000 (measured); from the pipe +-0.3 MiB. The counts are ffprobe's."""
    base = tmp_path / "base.mp4"
    cmd = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=64x64:rate=25", "-t", "2",
           "-c:v", "libx264", "-g", "25", "-movflags", "empty_moov+default_base_moof+frag_every_frame", base]
    lib.oracle_ok(lib.run(cmd), cmd)
    peaks = {}
    for copies in (200, 1000):
        path = tmp_path / f"x{copies}.mp4"
        path.write_bytes(_many_fragments(base.read_bytes(), copies))
        count = ["ffprobe", "-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path]
        ref = lib.run(count)
        lib.oracle_ok(ref, count)
        peak, out = _peak_rss_kib([mk_probe, "--count", "-"], path)
        assert out.decode().startswith(f"{int(ref.stdout)} packets"), (out, ref.stdout)
        peaks[copies] = peak
    assert peaks[1000] - peaks[200] < 1024, f"peak RSS {peaks[200]} KiB on 10 000 fragments, {peaks[1000]} KiB on 50 000"


def _box(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", 8 + len(body)) + kind + body


def _limited() -> None:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (256 << 20, 256 << 20))   # as test_memory_guard.py
    resource.setrlimit(resource.RLIMIT_CPU, (5, 5))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


@pytest.mark.parametrize("damage", ["moof_size", "trun_count"])
def test_sizes_a_pipe_does_not_hold_are_errors_not_allocations(damage, generated_dir, mk_probe, tmp_path, request):
    """A stream's size is not known, so what a fragment declares cannot be checked against the
    bytes left: a moof declaring 400 MB on a short stream is the cut of a truncated fragment (a
    warning, as from a file), a trun of 60 million samples without a sample table is a .limit
    error; under test_memory_guard.py's 256 MiB address-space limit, never a kill."""
    base = _input("gen:default_base_moof", generated_dir, tmp_path, request).read_bytes()
    at, head = 0, b""
    while at < len(base):
        size, kind = struct.unpack(">I4s", base[at:at + 8])
        if kind == b"moof":
            break
        head += base[at:at + size]
        at += size
    if damage == "moof_size":
        moof = struct.pack(">I", 400_000_000) + base[at + 4:at + 4096]
        data = head + moof
        expected = (0, "the moof box declares 400000000 bytes but the stream ends")
    else:
        tfhd = _box(b"tfhd", struct.pack(">II I", 0x020010, 1, 1))          # base is moof, default size 1
        tfdt = _box(b"tfdt", struct.pack(">I Q", 1 << 24, 0))
        trun = _box(b"trun", struct.pack(">I I i", 0x000001, 60_000_000, 0))
        moof = _box(b"moof", _box(b"mfhd", struct.pack(">II", 0, 1)) + _box(b"traf", tfhd + tfdt + trun))
        data = head + moof + _box(b"mdat", bytes(1000))
        expected = (1, "above the limit of")
    path = tmp_path / "damaged.mp4"
    path.write_bytes(data)
    with open(path, "rb") as f:
        proc = subprocess.run([str(mk_probe), "--count", "-"], stdin=f, capture_output=True, preexec_fn=_limited, timeout=60)
    message = proc.stderr.decode()
    assert proc.returncode == expected[0], f"exit {proc.returncode}: {message}"
    assert expected[1] in message, message
