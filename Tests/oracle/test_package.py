"""MediaKit as a dependency of another Swift package (issue 29 item 9).

SwiftPM refuses a dependency required by version (a URL and `from:`) when a target of a
product the dependent uses was built with unsafe flags (`-target-cpu`, `-O2`, ...): the
error is "the target 'X' in product 'Y' contains unsafe build flags", given while the
package graph loads. This test makes a git repository of this checkout's files, tags it
with MediaKit's version, and builds Tests/package (a dependent that uses MediaKit, the plugin
ABI and the four C codec plugins) against that tag.

Oracle: the dependent's decode of Samples/media/sample.mp4 through the dependency's FFmpeg
plugin gives as many video frames as ffprobe counts (`-count_frames`).

The products `mediakit` (libmediakit, the C library) and `MediaKitPluginSwiftAudio` keep a
linker version script (`-Xlinker --version-script`, an unsafe flag: the only way SwiftPM has to
export just the C API's symbols); C users build them with `make`, and the dependent does not
name them.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

SAMPLE = lib.REPO / "Samples" / "media" / "sample.mp4"
TEMPLATE = lib.REPO / "Tests" / "package"


def _version() -> str:
    text = (lib.REPO / "Sources" / "MediaKit" / "Core" / "Version.swift").read_text()
    m = re.search(r'static let string = "([0-9.]+)"', text)
    assert m, "Version.swift has no version string"
    return m.group(1)


def _git_in(cwd: Path, *args: str) -> None:
    proc = subprocess.run(["git", "-c", "user.email=test@mediakit", "-c", "user.name=test", *args],
                          cwd=cwd, capture_output=True, timeout=120)
    assert proc.returncode == 0, f"git {' '.join(args)}: {lib.tail(proc.stderr)}"


def test_a_package_depends_on_mediakit_by_version_and_decodes(tmp_path: Path) -> None:
    swift = shutil.which("swift") or "/opt/swift/usr/bin/swift"
    version = _version()
    # The checkout's files (tracked and new, as git sees them), as a repository of their own.
    src = tmp_path / "mediakit-src"
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=lib.REPO, capture_output=True, timeout=60)
    assert files.returncode == 0, lib.tail(files.stderr)
    for name in files.stdout.decode().split("\0"):
        if not name or not (lib.REPO / name).is_file():
            continue
        dest = src / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(lib.REPO / name, dest)
    _git_in(src, "init", "-q")
    _git_in(src, "add", "-A")
    _git_in(src, "commit", "-q", "-m", "MediaKit")
    _git_in(src, "tag", version)

    app = tmp_path / "dependent"
    (app / "Sources").mkdir(parents=True)
    manifest = (TEMPLATE / "Package.swift.in").read_text()
    (app / "Package.swift").write_text(manifest.replace("@URL@", src.as_uri()).replace("@VERSION@", version))
    shutil.copy2(TEMPLATE / "main.swift", app / "Sources" / "main.swift")

    # The graph check alone first: the error SwiftPM gives for unsafe flags, named.
    proc = lib.run([swift, "package", "--package-path", app, "show-dependencies"], timeout=300)
    assert proc.returncode == 0, ("SwiftPM refuses MediaKit as a versioned dependency:\n"
                                  + lib.tail(proc.stderr + proc.stdout))
    proc = lib.run([swift, "build", "--package-path", app], timeout=900)
    assert proc.returncode == 0, f"the dependent does not build:\n{lib.tail(proc.stdout + proc.stderr, 3000)}"
    bindir = lib.run([swift, "build", "--package-path", app, "--show-bin-path"]).stdout.decode().strip()

    proc = lib.run([Path(bindir) / "Dependent", SAMPLE, bindir])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    m = re.search(rb"(\d+) frames", proc.stdout)
    assert m, proc.stdout
    probe = lib.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames",
                     "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", SAMPLE])
    assert probe.returncode == 0, lib.tail(probe.stderr)
    assert int(m.group(1)) == int(probe.stdout.decode().strip()), (proc.stdout, probe.stdout)
