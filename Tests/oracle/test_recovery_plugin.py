"""DecodeSession's recovery (issue 14 item 1) through the real plugin path: a test plugin
written in C (Tests/plugin_harness/failing_plugin.c), built here, loaded by the registry from
MEDIAKIT_PLUGIN_PATH (ABI v2, like the real plugins) and asked for by name
(`mk-decode --backend failtest`). It fails on demand (on packet K, on rebuild R) and logs the
packets it is sent with their flags.

Oracles:
  - ffprobe's packet list of the input (decode order, key flags): the packets a rebuilt
    decoder must be sent again, discarded, are those from the last key frame before the
    first failed packet up to the packet before it; every other packet is sent once,
    not discarded; the pictures written are those of every packet but the failed ones, in order
    (the plugin writes each packet's place in the stream into its picture);
  - the issue's limits (as the iOS sample's, issue 35 item 8): the 20th consecutive packet the
    decoder rejects, the 5th failed rebuild (each tried on a later packet, ffprobe's pts naming
    the one it gave up at): mk-decode stops with an error that counts both, and the plugin saw
    exactly that many;
  - a decoder whose device goes away (MK_EINVALIDATED) is rebuilt at once and sent the packet
    again: every picture is written (the packet list), no damage counted.
"""
from __future__ import annotations

import os
import re
import struct
from pathlib import Path

import pytest

import oracle_lib as lib

W, H, GOP, FRAMES = 64, 48, 10, 100
SOURCE = lib.REPO / "Tests" / "plugin_harness" / "failing_plugin.c"


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("failtest-plugin")
    cmd = ["cc", "-std=c11", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-I", lib.REPO / "Include",
           "-o", out / "libMediaKitTestFailing.so", SOURCE]
    proc = lib.run(cmd)
    assert proc.returncode == 0, f"`{lib.shell_line(cmd)}` failed:\n{lib.tail(proc.stderr)}"
    return out


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("failtest-media") / "h264.mp4"
    proc = lib.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={W}x{H}:rate=25",
                    "-frames:v", str(FRAMES), "-c:v", "libx264", "-bf", "0", "-g", str(GOP), "-keyint_min", str(GOP),
                    "-sc_threshold", "0", "-pix_fmt", "yuv420p", out])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    return out


def _packets(path: Path) -> list[tuple[int, bool]]:
    """(pts, key) of the video packets in decode order, from ffprobe."""
    proc = lib.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,flags",
                    "-of", "csv=p=0", path])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    return [(int(line.split(",")[0]), "K" in line.split(",")[1]) for line in proc.stdout.decode().split()]


def _run(mk_decode: Path, plugin_dir: Path, media: Path, tmp: Path, packets: str = "", rebuilds: str = "",
         decoders: str = "", lose: str = ""):
    log = tmp / "plugin.log"
    log.unlink(missing_ok=True)
    out = tmp / "out.nv12"
    env = dict(os.environ, MEDIAKIT_PLUGIN_PATH=str(plugin_dir), MK_TESTPLUGIN_LOG=str(log),
               MK_TESTPLUGIN_FAIL_PACKETS=packets, MK_TESTPLUGIN_FAIL_REBUILDS=rebuilds,
               MK_TESTPLUGIN_FAIL_DECODERS=decoders, MK_TESTPLUGIN_LOSE_DEVICE=lose)
    proc = lib.run([mk_decode, media, "--video-out", out, "--backend", "failtest", "-q"], env=env)
    lines = log.read_text().splitlines() if log.is_file() else []
    sends = []
    for line in lines:
        if line.startswith("send "):
            _, dec, ordinal, pts, key, discard, result = line.split()
            sends.append({"decoder": int(dec), "ordinal": int(ordinal), "pts": int(pts), "key": key == "key",
                          "discard": discard == "discard", "ok": result == "ok", "result": result})
    creates = [line.split()[1:] for line in lines if line.startswith("create ")]
    pictures = out.read_bytes() if out.is_file() else b""
    size = W * H * 3 // 2
    ordinals = [struct.unpack_from("<q", pictures, i)[0] for i in range(0, len(pictures), size)]
    return proc, sends, creates, ordinals


def test_the_plugin_is_loaded_through_the_registry(mk_probe, plugin_dir):
    proc = lib.run([mk_probe, "--plugins"], env=dict(os.environ, MEDIAKIT_PLUGIN_PATH=str(plugin_dir)))
    lib.check_ok(proc, [mk_probe, "--plugins"])
    assert "failtest" in proc.stdout.decode(), lib.tail(proc.stdout)


def test_no_failure_every_packet_once(mk_decode, plugin_dir, source, tmp_path):
    proc, sends, creates, ordinals = _run(mk_decode, plugin_dir, source, tmp_path)
    lib.check_ok(proc, ["mk-decode", source])
    ref = _packets(source)
    assert [(s["pts"], s["key"]) for s in sends] == ref
    assert not any(s["discard"] for s in sends)
    assert creates == [["0", "ok"]]
    assert ordinals == list(range(len(ref)))


@pytest.mark.parametrize("k", [13, 20, 47])
def test_one_failed_packet_is_skipped_without_a_rebuild(k, mk_decode, plugin_dir, source, tmp_path):
    proc, sends, creates, ordinals = _run(mk_decode, plugin_dir, source, tmp_path, packets=str(k))
    lib.check_ok(proc, ["mk-decode", source])
    err = proc.stderr.decode()
    assert "1 packet(s) the decoder rejected were skipped (1 frame(s) lost)" in err and "0 decoder rebuild(s)" in err, err
    assert creates == [["0", "ok"]]
    assert ordinals == [i for i in range(len(_packets(source))) if i != k]


@pytest.mark.parametrize("k", [13, 20, 47])
def test_a_rebuild_re_feeds_the_gop_discarded(k, mk_decode, plugin_dir, source, tmp_path):
    """Two packets in a row fail: the second failure rebuilds the decoder, which is sent every
    packet the first one took from the last key frame (ffprobe's) on: those before the failures
    flagged discard (their pictures were written), then the two that failed, not discarded
    (the plugin ABI lets a decoder report an error on a later packet than the one that caused
    it, as libavcodec's frame threads do, so a rejected packet may be a good one: no picture of
    it came out), then the stream goes on from the packet after the failures, not discarded.
    The rejected packets failing again is the damage already counted, not a failed rebuild.
    (For k = 20, itself a key frame, the GOP starts at it.)"""
    proc, sends, creates, ordinals = _run(mk_decode, plugin_dir, source, tmp_path, packets=f"{k},{k + 1}")
    lib.check_ok(proc, ["mk-decode", source])
    ref = _packets(source)
    key = max(i for i in range(k + 1) if ref[i][1])
    assert creates == [["0", "ok"], ["1", "ok"]]
    first = [s for s in sends if s["decoder"] == 0]
    second = [s for s in sends if s["decoder"] == 1]
    assert [s["ordinal"] for s in first] == list(range(k + 2))
    refed = list(range(key, k))
    assert [s["ordinal"] for s in second[:len(refed)]] == refed, second[:len(refed) + 2]
    assert all(s["discard"] for s in second[:len(refed)]), "the re-fed packets are not flagged discard"
    assert [(s["pts"], s["key"]) for s in second[:len(refed)]] == ref[key:k]
    again = second[len(refed):len(refed) + 2]
    assert [(s["ordinal"], s["discard"], s["ok"]) for s in again] == [(k, False, False), (k + 1, False, False)], again
    rest = second[len(refed) + 2:]
    assert [s["ordinal"] for s in rest] == list(range(k + 2, len(ref)))
    assert not any(s["discard"] for s in rest)
    assert ordinals == [i for i in range(len(ref)) if i not in (k, k + 1)]
    err = proc.stderr.decode()
    assert "1 decoder rebuild(s)" in err and "2 packet(s) the decoder rejected were skipped (2 frame(s) lost)" in err, lib.tail(err)


def test_twenty_consecutive_failed_packets_give_up(mk_decode, plugin_dir, source, tmp_path):
    k = 30
    proc, sends, creates, ordinals = _run(mk_decode, plugin_dir, source, tmp_path, packets=f"{k}-")
    err = proc.stderr.decode()
    assert proc.returncode == 1, f"exit {proc.returncode}: {lib.tail(err)}"
    assert re.search(r"gave up after 20 consecutive packets the decoder rejected and 0 failed rebuilds "
                     r"\(limits 20 and 5\)", err), lib.tail(err)
    # The first decoder rejects k and k + 1 and is rebuilt (once: never again for the same
    # damage); the new one is sent k and k + 1 again (see above), then rejects k + 2 ... k + 19:
    # the 20th rejected packet gives up (the seed's rule).
    failed = [(s["decoder"], s["ordinal"]) for s in sends if not s["ok"]]
    assert failed == [(0, k), (0, k + 1), (1, k), (1, k + 1)] + [(1, i) for i in range(k + 2, k + 20)], failed
    assert creates == [["0", "ok"], ["1", "ok"]], creates
    assert max(s["ordinal"] for s in sends) == k + 19, "packets were sent after the give-up"
    assert not (tmp_path / "out.nv12").exists(), "a failed decode left its output"


def test_five_failed_rebuilds_give_up(mk_decode, plugin_dir, source, tmp_path):
    """The rebuild after k + 1 fails; it is tried again with each later packet (none is sent
    to a decoder meanwhile), and the 5th failure, with packet k + 5, gives up (ffprobe's pts)."""
    k = 25
    proc, sends, creates, ordinals = _run(mk_decode, plugin_dir, source, tmp_path, packets=f"{k},{k + 1}", rebuilds="1-")
    err = proc.stderr.decode()
    assert proc.returncode == 1, f"exit {proc.returncode}: {lib.tail(err)}"
    pts = _packets(source)[k + 5][0]
    assert f"and 5 failed rebuilds (limits 20 and 5) at the packet at pts {pts};" in err, lib.tail(err)
    assert creates == [["0", "ok"]] + [[str(i), "failed"] for i in range(1, 6)]
    assert max(s["ordinal"] for s in sends) == k + 1


def test_rebuilds_that_fail_then_succeed_go_on(mk_decode, plugin_dir, source, tmp_path):
    """Four failed rebuilds (below the limit of 5: with packets k + 1 ... k + 4), then one that
    works (with k + 5): it is sent the GOP, those already output discarded, then the packets
    no decoder had (k + 2 ... k + 5) not discarded: their pictures are written, in order."""
    k = 25
    proc, sends, creates, ordinals = _run(mk_decode, plugin_dir, source, tmp_path, packets=f"{k},{k + 1}", rebuilds="1-4")
    lib.check_ok(proc, ["mk-decode", source])
    assert creates == [["0", "ok"]] + [[str(i), "failed"] for i in range(1, 5)] + [["5", "ok"]]
    fifth = [s for s in sends if s["decoder"] == 5]
    assert [s["ordinal"] for s in fifth[:k + 6 - 20]] == list(range(20, k + 6))
    assert [s["ordinal"] for s in fifth if s["discard"]] == list(range(20, k))
    assert ordinals == [i for i in range(FRAMES) if i not in (k, k + 1)]


def test_rejected_packets_are_decoded_again_by_the_rebuilt_decoder(mk_decode, plugin_dir, source, tmp_path):
    """Only the first decoder rejects k and k + 1: the rebuilt one, re-fed the GOP with them,
    decodes them, so every picture is written and none is counted lost."""
    k = 33
    proc, sends, creates, ordinals = _run(mk_decode, plugin_dir, source, tmp_path, packets=f"{k},{k + 1}", decoders="0")
    lib.check_ok(proc, ["mk-decode", source])
    assert creates == [["0", "ok"], ["1", "ok"]]
    again = [(s["ordinal"], s["discard"], s["ok"]) for s in sends if s["decoder"] == 1][:k + 2 - 30]
    assert again == [(i, i < k, True) for i in range(30, k + 2)], again
    assert ordinals == list(range(FRAMES))
    err = proc.stderr.decode()
    assert "2 packet(s) the decoder rejected were skipped (0 frame(s) lost)" in err, lib.tail(err)


def test_a_lost_device_rebuilds_at_once_without_damage(mk_decode, plugin_dir, source, tmp_path):
    """The device goes away at packet k (MK_EINVALIDATED from then on): a new decoder at once,
    without a second failure, sent the GOP (discarded up to k - 1) and k itself; every picture
    is written and no damage is counted."""
    k = 47
    proc, sends, creates, ordinals = _run(mk_decode, plugin_dir, source, tmp_path, lose=str(k))
    lib.check_ok(proc, ["mk-decode", source])
    assert creates == [["0", "ok"], ["1", "ok"]]
    first = [(s["ordinal"], s["result"]) for s in sends if s["decoder"] == 0]
    assert first == [(i, "ok") for i in range(k)] + [(k, "invalidated")], first[-3:]
    second = [(s["ordinal"], s["discard"], s["ok"]) for s in sends if s["decoder"] == 1]
    assert second == [(i, i < k, True) for i in range(40, FRAMES)], second[:10]
    assert ordinals == list(range(FRAMES))
    err = proc.stderr.decode()
    assert "1 time(s) the decoder was invalidated" in err and "0 packet(s) the decoder rejected" in err, lib.tail(err)


def test_a_device_away_for_two_attempts_is_made_again_on_later_packets(mk_decode, plugin_dir, source, tmp_path):
    """The device goes away at k and creating a decoder fails twice (with k and k + 1): the third
    attempt, with k + 2, works and is sent the GOP from its key frame, k, k + 1 and k + 2 not
    discarded: every picture is written."""
    k = 47
    proc, sends, creates, ordinals = _run(mk_decode, plugin_dir, source, tmp_path, lose=str(k), rebuilds="1-2")
    lib.check_ok(proc, ["mk-decode", source])
    assert creates == [["0", "ok"], ["1", "failed"], ["2", "failed"], ["3", "ok"]]
    third = [(s["ordinal"], s["discard"]) for s in sends if s["decoder"] == 3]
    assert third == [(i, i < k) for i in range(40, FRAMES)], third[:10]
    assert ordinals == list(range(FRAMES))


@pytest.fixture(scope="module")
def c_program(mk_bin, tmp_path_factory) -> Path:
    """Tests/c/recovery_plugin.c: mk_async_decode_session over the failtest plugin."""
    out = tmp_path_factory.mktemp("recovery-c") / "recovery_plugin"
    cmd = ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", lib.REPO / "Include", lib.REPO / "Tests" / "c" / "recovery_plugin.c",
           "-L", mk_bin, "-lmediakit", f"-Wl,-rpath,{mk_bin}", "-o", out]
    proc = lib.run(cmd)
    assert proc.returncode == 0, f"`{lib.shell_line(cmd)}` failed:\n{lib.tail(proc.stderr)}"
    return out


# (plugin environment, frames, packets sent, rebuilds, invalidations, final status): the frames
# and packets from the packet list (ffprobe: 100 packets, one picture each), the limits the seed's.
C_CASES = {
    "clean": ({}, FRAMES, FRAMES, 0, 0, "MK_EOF"),
    # The device goes away at 47: rebuilt at once, every frame delivered, no damage.
    "lost-device": ({"MK_TESTPLUGIN_LOSE_DEVICE": "47"}, FRAMES, FRAMES, 1, 1, "MK_EOF"),
    # Every packet from 30 (a key frame) rejected: the 20th (49) gives up; 30 frames came out and
    # the session took the 49 packets before it.
    "give-up": ({"MK_TESTPLUGIN_FAIL_PACKETS": "30-"}, 30, 49, 1, 0, "MK_EDATA"),
    # Only the first decoder rejects 33 and 34: the rebuilt one decodes them again.
    "decoded-again": ({"MK_TESTPLUGIN_FAIL_PACKETS": "33,34", "MK_TESTPLUGIN_FAIL_DECODERS": "0"}, FRAMES, FRAMES, 1, 0, "MK_EOF"),
}


@pytest.mark.parametrize("case", sorted(C_CASES))
def test_the_c_session_follows_the_same_rules(case, c_program, plugin_dir, source):
    env_extra, frames, packets, rebuilds, invalidations, status = C_CASES[case]
    env = dict(os.environ, MEDIAKIT_PLUGIN_PATH=str(plugin_dir), **env_extra)
    cmd = [c_program, source, str(frames), str(packets), str(rebuilds), str(invalidations), status]
    proc = lib.run(cmd, env=env)
    out = proc.stdout.decode()
    assert proc.returncode == 0, f"{case}: {out}{lib.tail(proc.stderr)}"
    if status == "MK_EDATA":
        assert "gave up after 20 consecutive packets" in out, out
