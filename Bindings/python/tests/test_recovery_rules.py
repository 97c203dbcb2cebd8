"""The decode session's recovery rules from Python (issue 35 item 8), over the failtest plugin
(Tests/plugin_harness/failing_plugin.c, built here; it fails on demand and can lose its
"device"): the seed's limits (the 20th consecutive rejected packet gives up; a failed decoder
creation is tried again on later packets, the 5th failure gives up), a lost device
(MK_EINVALIDATED: ``SessionInvalidatedError``'s status) rebuilt at once without counting as
damage, and ``stats["packets"]`` beside ``stats["frames"]``.

Each case runs in a child interpreter (MEDIAKIT_PLUGIN_PATH names the plugin there, so this
process's registry never holds the test plugin). Oracles: ffprobe's packet list of the
generated input (100 packets, one picture each, a key frame every 10), and the limits the
issue gives (20, 5).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import mediakit
from conftest import REPO

FRAMES, GOP = 100, 10

CHILD = r"""
import json, sys
import mediakit
out = {"frames": 0, "error": None, "status": None}
with mediakit.open(sys.argv[1]) as container:
    session = container.decode(video=0, backend="failtest", threads=1)
    try:
        for frame in session:
            out["frames"] += 1
    except mediakit.MediaKitError as e:
        out["error"], out["status"] = e.message, e.name
    out["stats"] = session.stats
    out["kinds"] = [r.status for r in session.recoveries]
    out["lost"] = [r.frames_lost for r in session.recoveries]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the plugin's folder, the generated H.264 file)."""
    folder = tmp_path_factory.mktemp("rules")
    subprocess.run(["cc", "-std=c11", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-I", str(REPO / "Include"),
                    "-o", str(folder / "libMediaKitTestFailing.so"), str(REPO / "Tests" / "plugin_harness" / "failing_plugin.c")],
                   check=True)
    media = folder / "h264.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-frames:v", str(FRAMES),
                    "-c:v", "libx264", "-bf", "0", "-g", str(GOP), "-keyint_min", str(GOP), "-sc_threshold", "0",
                    "-pix_fmt", "yuv420p", str(media)], check=True)
    keys = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=flags", "-of", "csv=p=0",
                           str(media)], check=True, capture_output=True, text=True).stdout.split()
    assert len(keys) == FRAMES and [i for i, k in enumerate(keys) if "K" in k] == list(range(0, FRAMES, GOP))
    return folder, media


def decode(setup: tuple[Path, Path], **env: str) -> dict:  # type: ignore[type-arg]
    folder, media = setup
    full = dict(os.environ, MEDIAKIT_PLUGIN_PATH=str(folder), **env)
    full["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "Bindings" / "python"), full.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(media)], env=full, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict = json.loads(proc.stdout)  # type: ignore[type-arg]
    return result


def test_clean_decode_counts_packets_and_frames(setup: tuple[Path, Path]) -> None:
    r = decode(setup)
    assert r["error"] is None and r["frames"] == FRAMES
    assert r["stats"]["packets"] == FRAMES and r["stats"]["frames"] == FRAMES and r["stats"]["invalidations"] == 0


def test_the_twentieth_rejected_packet_gives_up(setup: tuple[Path, Path]) -> None:
    # Every packet from 30 (a key frame) on is rejected: the 20th, packet 49, gives up.
    r = decode(setup, MK_TESTPLUGIN_FAIL_PACKETS="30-")
    assert r["status"] == "MK_EDATA" and "gave up after 20 consecutive packets" in r["error"], r
    assert r["frames"] == 30 and r["stats"]["packets"] == 49, r


def test_five_failed_creations_on_later_packets_give_up(setup: tuple[Path, Path]) -> None:
    r = decode(setup, MK_TESTPLUGIN_FAIL_PACKETS="25,26", MK_TESTPLUGIN_FAIL_REBUILDS="1-")
    assert r["status"] == "MK_EFAIL" and "and 5 failed rebuilds (limits 20 and 5)" in r["error"], r
    assert r["frames"] == 25


def test_a_lost_device_is_rebuilt_without_damage(setup: tuple[Path, Path]) -> None:
    r = decode(setup, MK_TESTPLUGIN_LOSE_DEVICE="47")
    assert r["error"] is None and r["frames"] == FRAMES, r
    st = r["stats"]
    assert (st["invalidations"], st["rebuilds"], st["frames_lost"], st["packets"]) == (1, 1, 0, FRAMES), st
    assert r["kinds"] == ["MK_EINVALIDATED"] and r["lost"] == [0]


def test_rejected_packets_are_decoded_again_by_the_rebuilt_decoder(setup: tuple[Path, Path]) -> None:
    r = decode(setup, MK_TESTPLUGIN_FAIL_PACKETS="33,34", MK_TESTPLUGIN_FAIL_DECODERS="0")
    assert r["error"] is None and r["frames"] == FRAMES, r
    assert r["stats"]["rebuilds"] == 1 and r["lost"] == [0, 0], r


def test_the_invalidated_status_has_its_exception() -> None:
    e = mediakit.MediaKitError(-15, "the device went away")
    assert isinstance(e, mediakit.SessionInvalidatedError) and e.name == "MK_EINVALIDATED"
