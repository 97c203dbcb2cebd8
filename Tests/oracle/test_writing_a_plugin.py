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

The chapter "A container plugin" (MKDEMO, a made-up format read by a demuxer plugin in C and one
in Swift), from the same run:
  - its C plugin and its generator are MediaKit's Tests/plugin_harness/mkdemo.c and
    make_mkdemo.py byte for byte (those run in test_plugin_harness.py and run_valgrind.sh: the
    guide cannot drift from what is tested);
  - `mk-probe --json` names each plugin's format as the demuxer that read the file;
  - the generator's PCM: each plugin's mk-decode, ffmpeg's decode of each mk-remux output (WAV,
    Matroska) and a decode from 1.3 s (its tail) are the same bytes (the guide's `cmp` steps);
  - ffmpeg's SubRip of the Matroska remux is the generator's cues, text and times;
  - demuxer_harness.c passes on both plugins, with the same packet hash.
"""
from __future__ import annotations

import importlib.util
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
    check_container_chapter(out, steps, printed)


def test_the_container_chapter_is_the_tested_source():
    """The guide's MKDEMO plugin and generator blocks are the files the harness tests run."""
    blocks = {m.group(1): body for _, info, body in BLOCK.findall(GUIDE.read_text())
              if (m := re.search(r"\bfile=(\S+)", info))}
    for block, source in (("mkdemo-c/mkdemo.c", "mkdemo.c"), ("mkdemo-c/make_mkdemo.py", "make_mkdemo.py")):
        assert block in blocks, f"the guide has no block file={block}"
        assert blocks[block] == (lib.REPO / "Tests" / "plugin_harness" / source).read_text(), \
            f"the guide's {block} is not Tests/plugin_harness/{source}"


def check_container_chapter(out: str, steps: list[str], printed: dict[int, str]) -> None:
    """What the container chapter's steps printed, against the generator and ffmpeg."""
    assert "both container plugins read MKDEMO as the generator wrote it" in out, lib.tail(out)
    check = next(i for i, s in enumerate(steps) if "make_mkdemo" not in s and "demo.mkdemo" in s and "mk-remux" in s)
    text = printed[check]
    for plugin in ("mkdemo-c", "mkdemo-swift"):
        assert f'"demuxer" : "{plugin}:mkdemo"' in text, text
    spec = importlib.util.spec_from_file_location("make_mkdemo", lib.REPO / "Tests" / "plugin_harness" / "make_mkdemo.py")
    assert spec and spec.loader
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)

    def srt_time(ms: int) -> str:
        return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"
    expected = "".join(f"{n}\n{srt_time(start)} --> {srt_time(start + duration)}\n{cue}\n\n"
                       for n, (start, duration, cue) in enumerate(generator.CUES, 1))
    assert text.count(expected) == 2, f"ffmpeg's SubRip of the remuxes is not the generator's cues:\n{text}\nwanted twice:\n{expected}"
    harness = next(i for i, s in enumerate(steps) if "demuxer_harness" in s)
    lines = [l for l in printed[harness].splitlines() if l.startswith("format ")]
    assert len(lines) == 2 and lines[0] == lines[1] and "FAIL" not in printed[harness], printed[harness]
    assert lines[0].startswith("format mkdemo tracks 2 packets ") and lines[0].endswith("seek to the middle"), lines
