"""docs/writing-a-plugin.md, followed step by step from an empty folder.

The guide is turned into one bash script: each file block (```c file=PATH, ```swift file=PATH)
becomes a here-document writing PATH, each ```sh block its commands, in the order the guide
gives them (```text blocks are shown output, not run). The script runs in an empty scratch
folder with MEDIAKIT set to this checkout and MK_BIN to the binaries under test (the two
variables the guide's first step asks for), under `set -euo pipefail`: every step must succeed.

Oracles:
  - the registry's own listing (`mk-probe --plugins`, the guide's check step): both plugins,
    hello-c and hello-swift, loaded from the scratch folder, each with its pcm_u8 backend at
    priority 50, and no file of the folder refused;
  - `ffmpeg -f s16le` of the guide's pcm_u8 file: both plugins, chosen by name, decode it to the
    same bytes (the guide's `cmp` step, which must print its message);
  - the contract test (plugin_harness.c, the guide's last step) passes on both plugins.
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import oracle_lib as lib

GUIDE = lib.REPO / "docs" / "writing-a-plugin.md"
BLOCK = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)
MARK = "@@guide-step"


def guide_script(text: str) -> tuple[str, list[str]]:
    """(the bash script, the sh blocks in order)."""
    lines = ["set -euo pipefail"]
    steps: list[str] = []
    for lang, info, body in BLOCK.findall(text):
        file = re.search(r"\bfile=(\S+)", info)
        if file:
            delimiter = "MK_GUIDE_FILE_END"
            assert delimiter not in body
            lines += [f"mkdir -p \"$(dirname '{file.group(1)}')\"",
                      f"cat > '{file.group(1)}' <<'{delimiter}'", body.rstrip("\n"), delimiter]
        elif lang == "sh":
            lines += [f"echo '{MARK} {len(steps)}'", body.rstrip("\n")]
            steps.append(body)
    return "\n".join(lines) + "\n", steps


def test_the_guide_gives_plugins_that_load(mk_bin, tmp_path):
    text = GUIDE.read_text()
    script, steps = guide_script(text)
    assert any("--plugins" in s for s in steps), "the guide has no step listing the plugins"
    scratch = tmp_path / "empty-folder"
    scratch.mkdir()
    (tmp_path / "guide.sh").write_text(script)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDIAKIT")}
    env.update(MEDIAKIT=str(lib.REPO), MK_BIN=str(mk_bin))
    swift = shutil.which("swift") or "/opt/swift/usr/bin/swift"
    env["PATH"] = f"{Path(swift).parent}:{env.get('PATH', '')}"
    proc = lib.run(["bash", "-c", 'cd "$1" && exec bash "$2"', "guide", scratch, tmp_path / "guide.sh"],
                   env=env, timeout=900)
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    # What each step printed, by step.
    printed: dict[int, str] = {}
    for chunk in out.split(MARK + " ")[1:]:
        number, _, rest = chunk.partition("\n")
        printed[int(number)] = rest
    failed_at = max(printed) if printed else 0
    assert proc.returncode == 0, (f"the guide's step {failed_at} failed (exit {proc.returncode}):\n"
                                  f"{steps[failed_at] if failed_at < len(steps) else ''}\n"
                                  f"stdout:\n{lib.tail(out)}\nstderr:\n{lib.tail(err, 4000)}")
    listing = next(printed[i] for i, s in enumerate(steps) if "--plugins" in s)
    for name in ("hello-c", "hello-swift"):
        block = re.search(rf"^{name} .*?(?=^\S|\Z)", listing, re.M | re.S)
        assert block, f"mk-probe --plugins does not list {name}:\n{listing}"
        assert str(scratch / "plugins") in block.group(0), f"{name} not loaded from the guide's folder:\n{block.group(0)}"
        assert "pcm_u8 (audio, priority 50)" in block.group(0), block.group(0)
    refused = [l for l in listing.splitlines() if l.startswith("Refused:") and str(scratch) in l]
    assert not refused, "\n".join(refused)
    assert "both plugins decode as ffmpeg does" in out, lib.tail(out)
