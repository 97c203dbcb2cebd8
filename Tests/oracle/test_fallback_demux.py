"""Plugin container formats (plugin ABI 2.4, issue 31 items 1 and 2, read side): the FFmpeg
plugin's libavformat as the fallback demuxer for the containers MediaKit does not read itself.

Oracles (ORACLES.md):
- the breadth corpus (../shared/media/breadth, MANIFEST.tsv): every file ffprobe opens (the
  MANIFEST's ffprobe column) opens in MediaKit, natively or through the fallback, and the
  fallback's tracks carry the codecs ffprobe names. The native formats keep every file they
  claim: the fallback reads exactly the files whose container MediaKit has no reader for
  (AVI, Musepack; WebVTT has its native reader since issue 33);
- packets of the fallback-read files: `ffprobe -show_entries packet=...` (pts, dts, duration,
  size, position, key flag), line for line; through a pipe (`mk-probe -`), ffprobe reading the
  same pipe (libavformat's mpc demuxer drops the last frame when it cannot seek: so does ffprobe);
- `--demuxer ffmpeg:mov` forces libavformat on an MP4 MediaKit reads natively: its packets are
  ffprobe's (edit list applied, as libavformat does by default);
- remux into Matroska of a file only the fallback reads: `ffmpeg -c copy -f framemd5` of ours
  equals that of `ffmpeg -i FILE -c copy out.mkv`. The native Matroska muxer does not carry the
  breadth files' codecs (mpeg4 part 2, musepack7), so the source is an FLV (H.264 + AAC) ffmpeg
  writes;
- remux into MP4 of every breadth file only the fallback reads and of that FLV: framemd5 of ours
  equals framemd5 of `ffmpeg -i FILE -map 0 -c copy out.mp4` (FFmpeg's track time scales: the
  sample rate for audio, a video time base's denominator doubled up to 10000 or more; audio
  packets on the sample grid as ffmpeg's stream copy puts them), and the AVI's MPEG-4 Part 2
  sample entry (mp4v, esds, pasp, btrt) is ffmpeg's byte for byte. A file whose codec MP4 does
  not carry is listed (MP4_REFUSED) with the reason ffmpeg gives; our remux refuses it naming
  the codec;
- decode of fallback-read tracks: `ffmpeg -f rawvideo -pix_fmt nv12` / `-f s16le`, byte for byte
  (the same libavcodec behind the FFmpeg plugin): the AVI's MPEG-4 part 2, the FLV's H.264 and AAC;
- a codec no plugin decodes fails at decode naming the codec;
- `MEDIAKIT_NO_DEFAULT_PLUGINS=1`: native files still open, the others fail naming the plugin
  that reads them;
- `ldd`: libmediakit and the mk-* tools link no FFmpeg library; the FFmpeg plugin links
  libavformat.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

MANIFEST = "breadth/MANIFEST.tsv"
# The breadth files MediaKit has no native reader for, and the libavformat format that reads them.
FALLBACK = {
    "avi_meta-pytor_133ba9_testsrc2_mpeg4.avi": "ffmpeg:avi",
    "mpc_Borewit_539382_apev2.sv7.mpc": "ffmpeg:mpc",
}
AVI = "avi_meta-pytor_133ba9_testsrc2_mpeg4.avi"
MPC = "mpc_Borewit_539382_apev2.sv7.mpc"
# The fallback-read files `ffmpeg -map 0 -c copy out.mp4` refuses: (what ffmpeg says, the codec).
MP4_REFUSED = {
    MPC: ("Could not find tag for codec musepack7 in stream #0, codec not currently supported in container", "musepack7"),
}


def _manifest(shared: Path) -> list[tuple[str, list[str]]]:
    """(file, ffprobe's codec names in stream order) for each MANIFEST row ffprobe opened."""
    rows = []
    lines = (shared / MANIFEST).read_text().splitlines()
    head = lines[0].split("\t")
    for line in lines[1:]:
        cells = dict(zip(head, line.split("\t")))
        probe = cells.get("ffprobe", "")
        if not probe:
            continue
        codecs = [part.split("=", 1)[1] for part in probe.split("|") if part.startswith("codec_name=")]
        rows.append((cells["local_name"], codecs))
    return rows


def _probe_json(mk_probe: Path, path: Path, *extra: str, env: dict | None = None) -> dict:
    cmd = [mk_probe, "--json", *extra, path]
    proc = lib.run(cmd, env=env)
    lib.check_ok(proc, cmd)
    return json.loads(proc.stdout)


def _ffprobe_packets(path: Path) -> list[str]:
    return lib.ffprobe_packet_lines(path)


def _ffprobe_packets_piped(path: Path) -> list[str]:
    cmd = ["ffprobe", "-v", "error", "-show_entries", "packet=stream_index,pts,dts,duration,size,pos,flags",
           "-of", "csv=p=0", "-"]
    with open(path, "rb") as f:
        proc = subprocess.run(cmd, stdin=f, capture_output=True, timeout=lib.CMD_TIMEOUT)
    lib.oracle_ok(proc, cmd)
    return [",".join(l.split(",")[:6] + ["K" if l.split(",")[6].startswith("K") else "_"])
            for l in proc.stdout.decode().splitlines() if len(l.split(",")) >= 7]


def _packets(mk_probe: Path, path: Path | str, stdin=None, extra: tuple = ()) -> list[str]:
    cmd = [mk_probe, "--packets", *extra, path]
    proc = subprocess.run([str(c) for c in cmd], stdin=stdin, capture_output=True, timeout=lib.CMD_TIMEOUT)
    lib.check_ok(proc, cmd)
    return proc.stdout.decode().splitlines()


def test_breadth_corpus_opens(shared_media: Path, mk_probe: Path) -> None:
    """Every file of the breadth corpus that ffprobe opens opens in MediaKit; the fallback reads
    exactly the files no native format claims, with ffprobe's codecs."""
    rows = _manifest(shared_media)
    assert len(rows) >= 81, f"MANIFEST lists {len(rows)} files ffprobe opens"
    opened, failed, through = 0, [], {}
    for name, codecs in rows:
        cmd = [mk_probe, "--json", shared_media / "breadth" / name]
        proc = lib.run(cmd)
        if proc.returncode != 0:
            failed.append(f"{name}: {lib.tail(proc.stderr, 300)}")
            continue
        opened += 1
        info = json.loads(proc.stdout)
        fmt = info["format"]
        if fmt.get("demuxer_plugin"):
            through[name] = fmt["demuxer"]
            ours = [t["codec"] for t in info["tracks"]]
            assert ours == codecs, f"{name}: our tracks {ours}, ffprobe's {codecs}"
    print(f"breadth corpus: {opened} of {len(rows)} files open ({len(through)} through the fallback)")
    assert not failed, f"{len(failed)} of {len(rows)} files do not open:\n" + "\n".join(failed)
    assert through == FALLBACK


def test_native_files_keep_their_native_reader(shared_media: Path, mk_probe: Path) -> None:
    """Every file of ../shared/media (its MANIFEST) that opens, opens with a built-in reader: the
    fallback never takes a file a native format claims, nor an MP4 the native reader refuses."""
    names = [l.split("\t", 1)[0] for l in (shared_media / "MANIFEST.tsv").read_text().splitlines()[1:]]
    taken = []
    for name in names:
        path = shared_media / name
        if not path.is_file():
            continue
        proc = lib.run([mk_probe, "--json", path])
        if proc.returncode == 0 and json.loads(proc.stdout)["format"].get("demuxer_plugin"):
            taken.append(name)
    assert not taken, f"read through a plugin: {taken}"


@pytest.mark.parametrize("name", sorted(FALLBACK))
def test_fallback_packets_are_ffprobes(shared_media: Path, mk_probe: Path, name: str) -> None:
    """The packets of a fallback-read file are libavformat's, as ffprobe prints them; through a
    pipe (the plugin reads front to back: its IO has no seek) as ffprobe prints them from one."""
    path = shared_media / "breadth" / name
    ref = _ffprobe_packets(path)
    assert ref, f"ffprobe lists no packets of {name}"
    assert _packets(mk_probe, path) == ref
    with open(path, "rb") as f:
        assert _packets(mk_probe, "-", stdin=f) == _ffprobe_packets_piped(path)


@pytest.fixture
def sample_mp4() -> Path:
    return lib.REPO / "Samples" / "media" / "sample.mp4"


def test_demuxer_option_forces_libavformat(mk_probe: Path, sample_mp4: Path) -> None:
    """--demuxer ffmpeg:mov reads an MP4 with libavformat (ffprobe's packets, edit list applied
    as libavformat applies it); without it the native reader keeps the file."""
    assert _probe_json(mk_probe, sample_mp4)["format"]["demuxer"] == "mp4"
    forced = _probe_json(mk_probe, sample_mp4, "--demuxer", "ffmpeg:mov")
    assert forced["format"]["demuxer_plugin"] == "ffmpeg"
    assert forced["format"]["format_name"].startswith("mov")
    assert _packets(mk_probe, sample_mp4, extra=("--demuxer", "mov")) == _ffprobe_packets(sample_mp4)
    proc = lib.run([mk_probe, "--demuxer", "no-such-format", sample_mp4])
    assert proc.returncode != 0 and b"no demuxer named 'no-such-format'" in proc.stderr, proc.stderr


def test_plugins_lists_containers(mk_probe: Path) -> None:
    proc = lib.run([mk_probe, "--plugins"])
    lib.check_ok(proc, [mk_probe, "--plugins"])
    text = proc.stdout.decode()
    line = next((l for l in text.splitlines() if l.strip().startswith("containers (")), "")
    assert "avi (priority 0)" in line and "mpc (priority 0)" in line, text[:2000]


@pytest.fixture(scope="module")
def flv(tmp_path_factory) -> Path:
    """One second of H.264 + AAC in FLV, a container only the fallback reads."""
    out = tmp_path_factory.mktemp("flv") / "src.flv"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=d=1:s=320x240:r=25",
           "-f", "lavfi", "-i", "sine=d=1", "-c:v", "libx264", "-g", "10", "-c:a", "aac", "-shortest", out]
    lib.oracle_ok(lib.run(cmd), cmd)
    return out


def _framemd5(path: Path) -> list[str]:
    cmd = ["ffmpeg", "-v", "error", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return [l for l in proc.stdout.decode().splitlines() if not l.startswith("#software")]


def test_remux_fallback_to_matroska(flv: Path, mk_bin: Path, mk_probe: Path, tmp_path: Path) -> None:
    """An FLV (read by libavformat) copied into Matroska carries ffmpeg -c copy's packets."""
    assert _probe_json(mk_probe, flv)["format"]["demuxer"] == "ffmpeg:flv"
    ours, theirs = tmp_path / "ours.mkv", tmp_path / "theirs.mkv"
    cmd = [mk_bin / "mk-remux", flv, ours]
    lib.check_ok(lib.run(cmd), cmd)
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", flv, "-map", "0", "-c", "copy", theirs]
    lib.oracle_ok(lib.run(ref_cmd), ref_cmd)
    assert _framemd5(ours) == _framemd5(theirs)


def _framemd5_both(ours: Path, theirs: Path, tmp_path: Path) -> tuple[list[str], list[str]]:
    """framemd5 of two files in one ffmpeg run (each file's streams copied to its own list)."""
    a, b = tmp_path / "ours.framemd5", tmp_path / "theirs.framemd5"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", ours, "-i", theirs,
           "-map", "0", "-c", "copy", "-f", "framemd5", a, "-map", "1", "-c", "copy", "-f", "framemd5", b]
    lib.oracle_ok(lib.run(cmd), cmd)
    return tuple([l for l in f.read_text().splitlines() if not l.startswith("#software")] for f in (a, b))  # type: ignore[return-value]


def _sample_entries(path: Path) -> list[bytes]:
    """The stsd sample entries of every trak (moov/trak/mdia/minf/stbl/stsd), in order."""
    entries = []
    with open(path, "rb") as f:
        end = path.stat().st_size
        for moov in [b for b in lib.iter_boxes(f, 0, end) if b[0] == "moov"]:
            for trak in lib._child(f, moov, "trak"):
                boxes = [trak]
                for kind in ("mdia", "minf", "stbl", "stsd"):
                    boxes = [c for b in boxes for c in lib._child(f, b, kind)]
                for _, pos, hs, size in boxes:
                    f.seek(pos + hs + 8)                # version, flags, entry count
                    entries.append(f.read(size - hs - 8))
    return entries


def _remux_to_mp4(src: Path, mk_bin: Path, tmp_path: Path) -> tuple[Path, Path]:
    ours, theirs = tmp_path / "ours.mp4", tmp_path / "theirs.mp4"
    cmd = [mk_bin / "mk-remux", src, ours]
    lib.check_ok(lib.run(cmd), cmd)
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-map", "0", "-c", "copy", theirs]
    lib.oracle_ok(lib.run(ref_cmd), ref_cmd)
    return ours, theirs


@pytest.mark.parametrize("name", sorted(FALLBACK))
def test_remux_fallback_file_to_mp4(shared_media: Path, mk_bin: Path, tmp_path: Path, name: str) -> None:
    """Every breadth file only the fallback reads, copied into MP4: framemd5 equals that of
    ffmpeg's copy; a file whose codec MP4 does not carry is listed with ffmpeg's reason and
    refused by ours, naming the codec (nothing left under the output's name)."""
    src = shared_media / "breadth" / name
    theirs = tmp_path / "theirs.mp4"
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-map", "0", "-c", "copy", theirs]
    ref = lib.run(ref_cmd)
    if ref.returncode != 0:
        why = lib.tail(ref.stderr, 400)
        assert name in MP4_REFUSED, f"ffmpeg does not copy {name} into MP4 and MP4_REFUSED does not list it: {why}"
        reason, codec = MP4_REFUSED[name]
        assert reason in ref.stderr.decode(), f"{name}: ffmpeg now says {why}"
        ours = tmp_path / "ours.mp4"
        proc = lib.run([mk_bin / "mk-remux", src, ours])
        assert proc.returncode != 0 and codec.encode() in proc.stderr, proc.stderr
        assert not ours.exists()
        print(f"{name}: MP4 cannot carry it: {reason}")
        return
    assert name not in MP4_REFUSED, f"ffmpeg now copies {name} into MP4: {MP4_REFUSED.get(name)}"
    ours = tmp_path / "ours.mp4"
    cmd = [mk_bin / "mk-remux", src, ours]
    lib.check_ok(lib.run(cmd), cmd)
    a, b = _framemd5_both(ours, theirs, tmp_path)
    assert a == b, lib.diff_lines(a, b, "ours", "ffmpeg's")
    assert _sample_entries(ours) == _sample_entries(theirs)


def test_mpeg4_part2_sample_entry_is_ffmpegs(shared_media: Path, mk_bin: Path, tmp_path: Path) -> None:
    """The AVI's MPEG-4 Part 2 track in MP4: the mp4v entry (esds with Object Type 0x20, the VOL
    headers, the measured bit rates; pasp; btrt) is the one ffmpeg writes, byte for byte; in a
    fragmented file (no samples measured when the moov is written) the esds and btrt state the
    stream's bit rate, as ffmpeg's fragmented copy's do."""
    src = shared_media / "breadth" / AVI
    ours, theirs = _remux_to_mp4(src, mk_bin, tmp_path)
    entries = _sample_entries(ours)
    assert len(entries) == 1 and entries[0][4:8] == b"mp4v" and b"esds" in entries[0], entries
    assert entries == _sample_entries(theirs)
    frag, frag_ref = tmp_path / "frag.mp4", tmp_path / "frag_ref.mp4"
    cmd = [mk_bin / "mk-remux", "--fragment", "1", src, frag]
    lib.check_ok(lib.run(cmd), cmd)
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-map", "0", "-c", "copy",
               "-movflags", "frag_keyframe+empty_moov", frag_ref]
    lib.oracle_ok(lib.run(ref_cmd), ref_cmd)
    assert _sample_entries(frag) == _sample_entries(frag_ref)


def test_remux_fallback_to_mp4(flv: Path, mk_bin: Path, mk_probe: Path, tmp_path: Path) -> None:
    """An FLV (read by libavformat, 1/1000 time base) copied into MP4: framemd5 equals that of
    ffmpeg's copy: video in 1/16000, AAC in 1/44100 with its packets on the 1024-sample grid
    where the millisecond times allow, as ffmpeg's stream copy places them."""
    assert _probe_json(mk_probe, flv)["format"]["demuxer"] == "ffmpeg:flv"
    ours, theirs = _remux_to_mp4(flv, mk_bin, tmp_path)
    a, b = _framemd5_both(ours, theirs, tmp_path)
    assert "#tb 0: 1/16000" in b and "#tb 1: 1/44100" in b, b[:20]
    assert a == b, lib.diff_lines(a, b, "ours", "ffmpeg's")


def test_decode_fallback_tracks(flv: Path, shared_media: Path, mk_bin: Path, tmp_path: Path) -> None:
    """Tracks the fallback reads decode as ffmpeg decodes them (same libavcodec), byte for byte."""
    avi = shared_media / "breadth" / AVI
    mpc = shared_media / "breadth" / MPC   # musepack7: FFmpeg's decoder, offered since issue 31 item 3
    for src, video, audio in [(flv, True, True), (avi, True, False), (mpc, False, True)]:
        cmd = [mk_bin / "mk-decode", src]
        if video:
            cmd += ["--video-out", tmp_path / "v.nv12"]
        if audio:
            cmd += ["--audio-out", tmp_path / "a.pcm"]
        lib.check_ok(lib.run(cmd), cmd)
        if video:
            ref = ["ffmpeg", "-v", "error", "-i", src, "-map", "0:v:0", "-fps_mode", "passthrough",
                   "-f", "rawvideo", "-pix_fmt", "nv12", "-"]
            proc = lib.run(ref)
            lib.oracle_ok(proc, ref)
            assert (tmp_path / "v.nv12").read_bytes() == proc.stdout, f"{src.name}: video differs"
        if audio:
            ref = ["ffmpeg", "-v", "error", "-i", src, "-map", "0:a:0", "-f", "s16le", "-"]
            proc = lib.run(ref)
            lib.oracle_ok(proc, ref)
            assert (tmp_path / "a.pcm").read_bytes() == proc.stdout, f"{src.name}: audio differs"


def test_undecodable_codec_is_named(mk_bin: Path, mk_probe: Path, tmp_path: Path) -> None:
    """A fallback-read track whose codec no plugin decodes fails at decode, naming the codec as
    mk-probe names it. Input: a Sony Wave64 file (no native reader: libavformat's w64) made by
    ffmpeg from 16-bit PCM, its WAVEFORMATEX tag set to 0x0180, for which FFmpeg 5.1 has no
    decoder (ffprobe: codec "unknown")."""
    src = tmp_path / "pcm.w64"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=duration=0.5",
           "-c:a", "pcm_s16le", "-f", "w64", src]
    lib.oracle_ok(lib.run(cmd), cmd)
    data = bytearray(src.read_bytes())
    fmt = data.index(b"fmt \xf3\xac\xd3\x11") + 16 + 8   # the fmt chunk's GUID and 64-bit size
    assert data[fmt:fmt + 2] == b"\x01\x00", data[fmt:fmt + 2]
    data[fmt:fmt + 2] = (0x0180).to_bytes(2, "little")
    path = tmp_path / "retagged.w64"
    path.write_bytes(bytes(data))
    info = _probe_json(mk_probe, path)
    assert info["format"]["demuxer"] == "ffmpeg:w64", info["format"]
    codec = info["tracks"][0]["codec"]
    proc = lib.run([mk_bin / "mk-decode", path, "--audio-out", os.devnull, "-q"])
    assert proc.returncode == 1 and codec.encode() in proc.stderr, proc.stderr


def test_no_default_plugins_names_the_plugin(shared_media: Path, mk_probe: Path, sample_mp4: Path) -> None:
    env = dict(os.environ, MEDIAKIT_NO_DEFAULT_PLUGINS="1")
    env.pop("MEDIAKIT_PLUGIN_PATH", None)
    assert _probe_json(mk_probe, sample_mp4, env=env)["format"]["demuxer"] == "mp4"
    proc = lib.run([mk_probe, shared_media / "breadth" / AVI], env=env)
    assert proc.returncode != 0, proc.stdout
    assert b"libMediaKitPluginFFmpeg.so" in proc.stderr and b"RIFF" in proc.stderr, proc.stderr


def test_core_links_no_ffmpeg(mk_bin: Path) -> None:
    """The core and the tools link no FFmpeg library; only the FFmpeg plugin does (libavformat too)."""
    for name in ["libmediakit.so", "mk-probe", "mk-decode", "mk-remux", "mk-transcode"]:
        path = mk_bin / name
        assert path.exists(), path
        ldd = lib.run(["ldd", path]).stdout.decode()
        assert "libav" not in ldd and "libswscale" not in ldd, f"{name} links FFmpeg:\n{ldd}"
    ldd = lib.run(["ldd", mk_bin / "libMediaKitPluginFFmpeg.so"]).stdout.decode()
    assert "libavformat" in ldd, ldd
