"""Decoding damaged video: a packet the decoder rejects is skipped and decoding goes on
(DecodeSession's recovery, issue 14 item 1), as ffmpeg goes on after "Error while decoding".

Oracles (ORACLES.md: the same input fed another way, and ffmpeg):
  - every 30th packet of a generated H.264 / HEVC MP4 (a key frame every 25 frames, no
    B-frames) is damaged at offsets ffprobe gives (`-show_packets` pos, size): its slice
    header zeroed (the decoder rejects it) or bytes of its slice data flipped; or
    every 30th packet is dropped (`-bsf:v noise=drop=...`): `mk-decode` goes to the end
    (exit 0, a warning per skipped packet and a summary line);
  - every frame from the first key frame after each damage up to the next damage is
    byte-identical to ffmpeg's decode of the undamaged file (its framemd5 of NV12);
  - the frames missing from our output are those missing from ffmpeg's decode of the same
    damaged file (its framemd5 pts), as many as mk-decode's summary line says lost, each at a
    damaged packet (or a few after it: with frame threads an error surfaces later);
  - for the flipped files, as many frames as ffmpeg's decode of the same damaged file (ffmpeg
    skips the packets its decoder rejects too; the concealed frames before the next key frame
    are not compared: error concealment under frame threads is not deterministic).
"""
from __future__ import annotations

import hashlib
import random
import re
from fractions import Fraction
from pathlib import Path

import pytest

import oracle_lib as lib

FRAMES, GOP, EVERY, FPS, W, H = 200, 25, 30, 25, 320, 240
FRAME = W * H * 3 // 2


def _source(codec: str, out: Path) -> None:
    enc = {"h264": ["-c:v", "libx264", "-bf", "0", "-g", str(GOP), "-keyint_min", str(GOP), "-sc_threshold", "0"],
           "hevc": ["-c:v", "libx265", "-x265-params", f"bframes=0:keyint={GOP}:min-keyint={GOP}:scenecut=0:log-level=error"]}[codec]
    proc = lib.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={W}x{H}:rate={FPS}",
                    "-frames:v", str(FRAMES), *enc, "-pix_fmt", "yuv420p", out])
    assert proc.returncode == 0, lib.tail(proc.stderr)


def _packets(path: Path) -> list[dict]:
    proc = lib.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,pos,size,flags",
                    "-of", "csv=p=0", path])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    out = []
    for line in proc.stdout.decode().split():
        pts, size, pos, flags = line.split(",")[:4]
        out.append({"pts": int(pts), "size": int(size), "pos": int(pos), "key": "K" in flags})
    return out


def _frame_md5s(path: Path) -> list[str]:
    proc = lib.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough",
                    "-f", "rawvideo", "-pix_fmt", "nv12", "-"])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    data = proc.stdout
    return [hashlib.md5(data[i:i + FRAME]).hexdigest() for i in range(0, len(data), FRAME)]


def _present_frames(path: Path) -> list[int]:
    """The frame indices (pts in 1/FPS) of ffmpeg's decode, from its framemd5."""
    proc = lib.run(["ffmpeg", "-v", "quiet", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough", "-pix_fmt", "nv12",
                    "-f", "framemd5", "-"])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    return [int(l.split(",")[1]) for l in proc.stdout.decode().splitlines() if l and not l.startswith("#")]


def _time_base(path: Path) -> Fraction:
    info = lib.ffprobe_json(path)
    return Fraction(next(s["time_base"] for s in info["streams"] if s["codec_type"] == "video"))


def _decode(mk_bin: Path, path: Path, tmp: Path) -> tuple[list[str], str]:
    out = tmp / (path.stem + ".nv12")
    cmd = [mk_bin / "mk-decode", path, "--video-out", out]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    data = out.read_bytes()
    assert len(data) % FRAME == 0
    return [hashlib.md5(data[i:i + FRAME]).hexdigest() for i in range(0, len(data), FRAME)], proc.stderr.decode()


@pytest.mark.parametrize("codec", ["h264", "hevc"])
def test_flipped_packets_are_skipped_and_decoding_goes_on(codec, mk_bin, tmp_path):
    clean = tmp_path / f"clean_{codec}.mp4"
    _source(codec, clean)
    packets = _packets(clean)
    assert len(packets) == FRAMES
    data = bytearray(clean.read_bytes())
    rng = random.Random(7)
    damaged_idx = list(range(EVERY - 1, FRAMES, EVERY))
    header = {"h264": 5, "hevc": 6}[codec]      # 4-byte NAL length + the NAL header
    for n, i in enumerate(damaged_idx):
        p = packets[i]
        if n % 2 == 0:                            # the slice header zeroed: the decoder rejects the packet
            data[p["pos"] + header:p["pos"] + header + 6] = bytes(6)
        else:                                     # bytes flipped in the slice data: concealed
            for _ in range(16):
                data[p["pos"] + header + 8 + rng.randrange(max(1, p["size"] - header - 8))] ^= 0xA5
    bad = tmp_path / f"bad_{codec}.mp4"
    bad.write_bytes(bytes(data))

    ours, err = _decode(mk_bin, bad, tmp_path)
    reference = _frame_md5s(clean)
    assert len(reference) == FRAMES
    # Which frames survive: ffmpeg's decode of the same damaged file (it skips the packets its
    # decoder rejects, as we do), read with their pts from its framemd5.
    present = _present_frames(bad)
    assert len(ours) == len(present), f"{codec}: {len(ours)} frames out, ffmpeg's decode of the damaged file has {len(present)}"
    lost = FRAMES - len(ours)
    assert lost > 0, f"{codec}: no packet was rejected by the decoder (the test must exercise skipping):\n{lib.tail(err)}"
    summary = re.search(r"(\d+) packet\(s\) the decoder rejected were skipped \((\d+) frame\(s\) lost\)", err)
    assert summary, f"no damage summary in mk-decode's output:\n{lib.tail(err)}"
    assert int(summary.group(2)) == lost, f"{codec}: {summary.group(2)} frames reported lost, {lost} missing"
    missing = sorted(set(range(FRAMES)) - set(present))
    for i in missing:
        assert any(0 <= i - d <= 4 for d in damaged_idx), f"{codec}: frame {i} missing, far from the damage {damaged_idx}"
    by_index = dict(zip(present, ours))
    for n, d in enumerate(damaged_idx):
        key = next((i for i in range(d + 1, FRAMES) if packets[i]["key"]), None)
        end = damaged_idx[n + 1] if n + 1 < len(damaged_idx) else FRAMES
        for i in range(key or FRAMES, end):
            assert by_index.get(i) == reference[i], f"{codec}: frame {i} (after the key frame {key} that follows damage at {d}) differs from ffmpeg's decode of the undamaged file"


@pytest.mark.parametrize("codec", ["h264", "hevc"])
def test_dropped_packets_cost_only_their_gop(codec, mk_bin, tmp_path):
    clean = tmp_path / f"clean_{codec}.mp4"
    _source(codec, clean)
    dropped = tmp_path / f"dropped_{codec}.mp4"
    proc = lib.run(["ffmpeg", "-v", "error", "-y", "-i", clean, "-c", "copy", "-bsf:v", f"noise=drop=eq(mod(n\\,{EVERY})\\,{EVERY - 1})",
                    dropped])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    kept_packets = _packets(dropped)
    assert len(kept_packets) < FRAMES
    tb = _time_base(dropped)
    kept_idx = [int(Fraction(p["pts"]) * tb * FPS) for p in kept_packets]
    ours, _ = _decode(mk_bin, dropped, tmp_path)
    reference = _frame_md5s(clean)
    assert len(ours) == len(kept_packets), f"{len(ours)} frames out of {len(kept_packets)} packets"
    missing = sorted(set(range(FRAMES)) - set(kept_idx))
    by_index = dict(zip(sorted(kept_idx), ours))
    for n, d in enumerate(missing):
        key = next((i for i in range(d + 1, FRAMES) if i % GOP == 0), FRAMES)
        end = missing[n + 1] if n + 1 < len(missing) else FRAMES
        for i in range(key, end):
            assert by_index[i] == reference[i], f"{codec}: frame {i} (after key frame {key}, past the drop at {d}) differs from ffmpeg's"
