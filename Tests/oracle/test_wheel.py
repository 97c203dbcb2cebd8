"""`make wheel` installs elsewhere (issue 34, items 1 and 2).

The wheel is built from the build under test (MK_BIN: no second Swift build), installed into a
fresh venv, and run from a folder outside the checkout with a bare environment (`env -i`, PATH
the venv's and /usr/bin:/bin, no LD_LIBRARY_PATH): a decode (the `mk-decode` console script and
`mediakit.decode`), a remux (`python -m mediakit remux`), a probe and `mediakit.plugins()`.
Oracles: the loader's account (`LD_DEBUG=libs`: nothing from the toolchain or the checkout),
`readelf` (RUNPATH $ORIGIN only; the GLIBC_ versions the files need), and the in-tree build's
outputs on the demo file (byte-identical; the same plugins).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import oracle_lib as lib

SAMPLE = lib.REPO / "Samples" / "media" / "sample.mp4"
TOOLCHAIN = "/opt/swift"


def _run(cmd: list[object], cwd: Path, env: dict[str, str] | None) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, timeout=lib.CMD_TIMEOUT)
    assert proc.returncode == 0, f"{cmd}: {lib.tail(proc.stderr)}"
    return proc


def _isolated(proc: subprocess.CompletedProcess[bytes], site: Path, who: str) -> None:
    loaded = sorted(set(re.findall(r"calling init: (\S+)", proc.stderr.decode())))
    assert any(p.endswith("libswiftCore.so") for p in loaded), f"{who}: LD_DEBUG shows no Swift runtime"
    outside = [p for p in loaded if p.startswith((TOOLCHAIN, str(lib.REPO)))]
    assert not outside, f"{who} loads from the toolchain or the checkout: {outside}"
    ours = [p for p in loaded if "swift" in p.lower() or "MediaKit" in p or "mediakit" in p or "Foundation" in p]
    assert all(p.startswith(str(site)) for p in ours), (who, ours)


def test_wheel_installs_in_a_fresh_venv_and_runs_without_the_toolchain(mk_bin: Path, tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    proc = lib.run(["make", "-s", "-C", lib.REPO, "wheel", f"FROM={mk_bin}", f"DIST={dist}"], timeout=600)
    assert proc.returncode == 0, lib.tail(proc.stdout + proc.stderr)
    version = lib.run(["make", "-s", "-C", lib.REPO, "version"]).stdout.decode().strip()
    wheels = list(dist.glob("*.whl"))
    assert [w.name for w in wheels] == [f"mediakit-{version}-py3-none-linux_{os.uname().machine}.whl"]

    # The files inside: every ELF's RUNPATH is $ORIGIN alone; the highest GLIBC_ version they
    # need (readelf's version needs) is what the wheel states and not above this machine's.
    with zipfile.ZipFile(wheels[0]) as z:
        z.extractall(tmp_path / "unpacked")
        listed = z.read("mediakit/_lib/_system_libs.txt").decode()
    libdir = tmp_path / "unpacked" / "mediakit" / "_lib"
    glibc = (2, 0)
    for f in sorted(libdir.iterdir()):
        if f.read_bytes()[:4] != b"\x7fELF":
            continue
        dyn = lib.run(["readelf", "-d", "-V", f]).stdout.decode()
        assert re.findall(r"RUNPATH\)\s+Library runpath: \[([^\]]*)\]", dyn) == ["$ORIGIN"], f.name
        for m in re.finditer(r"Name: GLIBC_(\d+)\.(\d+)", dyn):
            glibc = max(glibc, (int(m.group(1)), int(m.group(2))))
    assert f"# glibc {glibc[0]}.{glibc[1]} " in listed, listed
    here = tuple(int(x) for x in os.confstr("CS_GNU_LIBC_VERSION").split()[1].split(".")[:2])  # type: ignore[union-attr]
    assert glibc <= here

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], tmp_path, None)
    _run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-index", "--no-deps", wheels[0]], tmp_path, None)
    site = Path(_run([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     tmp_path, None).stdout.decode().strip())

    work = tmp_path / "work"
    work.mkdir()
    sample = work / "sample.mp4"
    sample.write_bytes(SAMPLE.read_bytes())
    bare = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "LD_DEBUG": "libs"}

    # Decode: the console script and the Python API, against the in-tree mk-decode.
    installed = _run(["mk-decode", sample, "--audio-out", "w.pcm", "--video-out", "w.nv12"], work, bare)
    _isolated(installed, site, "mk-decode (console script)")
    _run([mk_bin / "mk-decode", sample, "--audio-out", "t.pcm", "--video-out", "t.nv12"], work, None)
    assert (work / "w.pcm").read_bytes() == (work / "t.pcm").read_bytes()
    assert (work / "w.nv12").read_bytes() == (work / "t.nv12").read_bytes()
    api = _run([venv / "bin" / "python", "-c",
                "import mediakit; mediakit.decode('sample.mp4', audio_out='p.pcm', video_out='p.nv12')"], work, bare)
    _isolated(api, site, "mediakit.decode")
    assert (work / "p.pcm").read_bytes() == (work / "t.pcm").read_bytes()
    assert (work / "p.nv12").read_bytes() == (work / "t.nv12").read_bytes()

    # Remux and probe through `python -m mediakit`.
    remux = _run([venv / "bin" / "python", "-m", "mediakit", "remux", sample, "w.mp4"], work, bare)
    _isolated(remux, site, "python -m mediakit remux")
    _run([mk_bin / "mk-remux", sample, "t.mp4"], work, None)
    assert (work / "w.mp4").read_bytes() == (work / "t.mp4").read_bytes()
    probe = _run([venv / "bin" / "python", "-m", "mediakit", "probe", sample], work, bare)
    assert probe.stdout == _run([mk_bin / "mk-probe", sample], work, None).stdout

    # mediakit.plugins(): the in-tree build's plugins, each loaded from the wheel's _lib.
    script = ("import json, mediakit; print(json.dumps([mediakit.LIBRARY_PATH, mediakit.missing_system_libraries(),"
              " sorted((p.name, p.version, p.path) for p in mediakit.plugins()), mediakit.version()]))")
    out = _run([venv / "bin" / "python", "-c", script], work, bare)
    _isolated(out, site, "mediakit.plugins()")
    library, missing, found, mk_version = json.loads(out.stdout)
    assert library.startswith(str(site)) and missing == []
    assert mk_version == version  # mk_version() and the wheel's name: the one version
    tree_env = dict(os.environ, PYTHONPATH=str(lib.REPO / "Bindings" / "python"),
                    MEDIAKIT_LIBRARY=str(mk_bin / "libmediakit.so"))
    _, _, reference, _ = json.loads(_run([sys.executable, "-c", script], work, tree_env).stdout)
    assert [p[:2] for p in found] == [p[:2] for p in reference] and len(found) >= 5, (found, reference)
    assert all(Path(p[2]).parent == Path(site) / "mediakit" / "_lib" for p in found), found


def test_a_missing_system_library_is_named_with_its_debian_package(tmp_path: Path) -> None:
    """missing_system_libraries() reads the wheel's list and names the package of a library this
    machine lacks (a list naming one no machine has), and nothing for ones it has."""
    pkg = tmp_path / "mediakit"
    (pkg / "_lib").mkdir(parents=True)
    (pkg / "_system.py").write_text((lib.REPO / "Bindings" / "python" / "mediakit" / "_system.py").read_text())
    (pkg / "__init__.py").write_text("")
    (pkg / "_lib" / "_system_libs.txt").write_text(
        "# plugin soname package\nlibMediaKitPluginFFmpeg.so libavcodec.so.999 libavcodec999\n"
        "libMediaKitPluginOpus.so libc.so.6 libc6\n")
    proc = _run([sys.executable, "-c", "import json; from mediakit._system import missing_system_libraries as m; "
                 "print(json.dumps(m()))"], tmp_path, None)
    assert json.loads(proc.stdout) == [
        "the plugin libMediaKitPluginFFmpeg.so cannot load: libavcodec.so.999 is missing; "
        "install the Debian package libavcodec999 (apt-get install libavcodec999)"]
