"""MediaKit installed the way distributions ship libraries (issue 34, items 1 to 3).

`make deb` from the build under test: each package is unpacked alone (dpkg -x) and its Depends
is checked against what its files load (every library an ELF file needs comes from the package
set or from a Debian package its Depends names); then the eight packages are installed with
`dpkg --root=R -i` into a scratch root whose package database is a copy of this machine's
status file, so dpkg itself checks every Depends (versions included) against the Debian packages
installed here and configures each package; then the installed mk-probe, mk-decode and a C
program built with `pkg-config` from the installed tree run with a bare environment
(`env -i PATH=/usr/bin:/bin`) from outside the checkout. Oracles: dpkg's dependency check, the
loader's own account (`LD_DEBUG=libs`: nothing resolves into the toolchain or the checkout),
`readelf` (soname, RUNPATH), and the in-tree build's outputs on the demo file (byte-identical).

dpkg --root installs as root (CI runs as root; elsewhere, without root, the packages are unpacked
with dpkg -x instead and the run says so); skipped where dpkg-deb is absent (not Debian).
"""
from __future__ import annotations

import functools
import os
import re
import sysconfig
import shutil
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

SAMPLE = lib.REPO / "Samples" / "media" / "sample.mp4"
DECODE_C = lib.REPO / "Samples" / "c" / "decode.c"
BARE = {"PATH": "/usr/bin:/bin"}
TOOLCHAIN = "/opt/swift"


def _version() -> str:
    proc = lib.run(["make", "-s", "-C", lib.REPO, "version"])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    return proc.stdout.decode().strip()


def _run(cmd: list[object], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, timeout=lib.CMD_TIMEOUT)


def _loaded(proc: subprocess.CompletedProcess[bytes]) -> list[str]:
    """The files the loader opened, from LD_DEBUG=libs ("calling init: PATH")."""
    return sorted(set(re.findall(r"calling init: (\S+)", proc.stderr.decode())))


def _check_isolated(proc: subprocess.CompletedProcess[bytes], root: Path, who: str) -> None:
    assert proc.returncode == 0, f"{who}: {lib.tail(proc.stderr)}"
    loaded = _loaded(proc)
    assert any("libswiftCore.so" in p for p in loaded), f"{who}: LD_DEBUG shows no Swift runtime: {loaded[:5]}"
    outside = [p for p in loaded if p.startswith((TOOLCHAIN, str(lib.REPO)))]
    assert not outside, f"{who} loads from the toolchain or the checkout: {outside}"
    ours = [p for p in loaded if "mediakit" in p.lower() or "swift" in p.lower() or "Foundation" in p]
    assert all(os.path.realpath(p).startswith(str(root)) for p in ours), ours


def _deb_field(deb: Path, field: str) -> str:
    return lib.run(["dpkg-deb", "-f", deb, field]).stdout.decode().strip()


def _needed(path: Path) -> list[str]:
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", lib.run(["readelf", "-d", path]).stdout.decode())


@functools.lru_cache(maxsize=None)
def _system_owner(soname: str) -> str:
    """The Debian package that ships a system library (ldconfig's cache, then dpkg -S; each
    `dpkg -S` reads dpkg's whole database, so a soname is looked up once)."""
    cache = lib.run([shutil.which("ldconfig") or "/sbin/ldconfig", "-p"]).stdout.decode()
    m = re.search(rf"^\s+{re.escape(soname)} \(libc6,x86-64\) => (\S+)$", cache, flags=re.M)
    assert m, f"{soname} is not a system library (ldconfig -p)"
    for path in dict.fromkeys([m.group(1), os.path.realpath(m.group(1)),
                               re.sub(r"^/usr/lib/", "/lib/", os.path.realpath(m.group(1)))]):
        proc = lib.run(["dpkg", "-S", path])
        if proc.returncode == 0:
            return proc.stdout.decode().split(":")[0]
    raise AssertionError(f"no package ships {soname}")


def _install(root: Path, debs: list[Path]) -> None:
    """The packages installed into `root` by dpkg (unpacked and configured), its database a copy
    of this machine's status file: dpkg refuses to configure a package whose Depends the
    machine's installed packages do not meet. Without root (dpkg --root chowns to root), and
    only outside CI, they are unpacked with dpkg -x instead."""
    if os.geteuid() != 0:
        assert os.environ.get("CI") != "true", "the install test runs dpkg --root as root under CI"
        print("not root: the packages are unpacked (dpkg -x), not installed by dpkg")
        for deb in debs:
            assert lib.run(["dpkg", "-x", deb, root]).returncode == 0
        return
    admin = root / "var" / "lib" / "dpkg"
    for sub in ("info", "updates", "triggers"):
        (admin / sub).mkdir(parents=True)
    shutil.copy2("/var/lib/dpkg/status", admin / "status")
    (admin / "available").touch()
    proc = lib.run(["dpkg", f"--root={root}", "--log=/dev/null", "--no-triggers", "-i", *debs], timeout=300)
    out = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    assert proc.returncode == 0, f"dpkg -i of the packages failed:\n{lib.tail(out, 3000)}"
    status = lib.run(["dpkg-query", f"--admindir={admin}", "-W", "-f", "${Package} ${db:Status-Abbrev}\\n",
                      *[_deb_field(d, "Package") for d in debs]]).stdout.decode()
    assert all(line.split()[1] == "ii" for line in status.splitlines()), status


@pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="dpkg-deb is missing: not a Debian system")
def test_debs_install_with_their_depends_and_run_without_the_toolchain(mk_bin: Path, tmp_path: Path) -> None:
    version = _version()
    dist = tmp_path / "dist"
    proc = lib.run(["make", "-s", "-C", lib.REPO, "deb", f"FROM={mk_bin}", f"DIST={dist}", "LINTIAN="], timeout=900)
    assert proc.returncode == 0, lib.tail(proc.stdout + proc.stderr)
    debs = {_deb_field(d, "Package"): d for d in sorted(dist.glob("*.deb"))}
    plugins = sorted(p.name[len("libMediaKitPlugin"):-3].lower() for p in mk_bin.glob("libMediaKitPlugin*.so"))
    assert set(debs) == {f"libmediakit{version.split('.')[0]}", "libmediakit-dev", "mediakit-tools",
                         *[f"mediakit-plugins-{p}" for p in plugins]}, sorted(debs)

    # Each package unpacked alone: what its ELF files need is in it, in a package of ours it
    # depends on, or in a system package its Depends names.
    root = tmp_path / "root"
    files: dict[str, set[str]] = {}
    for name, deb in debs.items():
        alone = tmp_path / "alone" / name
        alone.mkdir(parents=True)
        assert lib.run(["dpkg", "-x", deb, alone]).returncode == 0
        files[name] = {p.name for p in alone.rglob("*") if p.is_file() or p.is_symlink()}
    for name, deb in debs.items():
        depends = {d.split()[0] for d in _deb_field(deb, "Depends").split(", ") if d}
        reachable = set(files[name]).union(*(files[d] for d in depends if d in files))
        for elf in (tmp_path / "alone" / name).rglob("*"):
            if not elf.is_file() or elf.is_symlink() or elf.read_bytes()[:4] != b"\x7fELF":
                continue
            for soname in _needed(elf):
                if soname not in reachable:
                    owner = _system_owner(soname)
                    assert owner in depends, f"{name}: {elf.name} needs {soname} ({owner}), not in Depends {sorted(depends)}"
        for d in depends - set(files):  # a system package: installed here, as on the Debian 12 we target
            assert lib.run(["dpkg-query", "-W", d]).returncode == 0, f"{name} depends on {d}, unknown to dpkg"

    _install(root, list(debs.values()))
    usr = root / "usr"
    lib_real = usr / "lib" / f"libmediakit.so.{version}"
    dyn = lib.run(["readelf", "-d", lib_real]).stdout.decode()
    assert f"Library soname: [libmediakit.so.{version.split('.')[0]}]" in dyn, dyn
    assert os.readlink(usr / "lib" / f"libmediakit.so.{version.split('.')[0]}") == lib_real.name
    for elf in [lib_real, *usr.glob("bin/mk-*"), *usr.glob("lib/mediakit/*/*.so")]:
        runpath = re.findall(r"RUNPATH\)\s+Library runpath: \[([^\]]*)\]", lib.run(["readelf", "-d", elf]).stdout.decode())
        assert all(p.startswith("$ORIGIN") for r in runpath for p in r.split(":")), (elf, runpath)

    # Every tool has a manual page (lintian's no-manual-page) that man renders without a
    # warning and that holds the tool's own --help (its USAGE line).
    tools = sorted(p.name for p in usr.glob("bin/mk-*"))
    assert sorted(p.name for p in usr.glob("share/man/man1/*.1.gz")) == [f"{t}.1.gz" for t in tools]
    assert shutil.which("man"), "man is missing (scripts/deps.sh installs man-db)"
    for t in tools:
        page = lib.run(["man", "--warnings", "-l", usr / "share" / "man" / "man1" / f"{t}.1.gz"],
                       env={**os.environ, "MANWIDTH": "120", "MANPAGER": "cat"})
        text = page.stdout.decode("utf-8", "replace")
        assert page.returncode == 0 and not page.stderr.strip(), (t, lib.tail(page.stderr))
        assert f"USAGE: {t}" in text, (t, text[:500])

    # The installed tools, from outside the checkout, with a bare environment, against the
    # in-tree build: same bytes.
    work = tmp_path / "work"
    work.mkdir()
    sample = work / "sample.mp4"
    shutil.copy2(SAMPLE, sample)
    env = dict(BARE, LD_DEBUG="libs")
    installed = _run([usr / "bin" / "mk-probe", sample], work, env)
    _check_isolated(installed, root, "mk-probe")
    in_tree = _run([mk_bin / "mk-probe", sample], work)
    assert installed.stdout == in_tree.stdout
    outs = {}
    for who, tool in (("installed", usr / "bin" / "mk-decode"), ("in-tree", mk_bin / "mk-decode")):
        a, v = work / f"{who}.pcm", work / f"{who}.nv12"
        proc = _run([tool, sample, "--audio-out", a, "--video-out", v], work, env if who == "installed" else None)
        if who == "installed":
            _check_isolated(proc, root, "mk-decode")
            loaded = _loaded(proc)
            assert any(p.endswith("libMediaKitPluginFFmpeg.so") and p.startswith(str(root)) for p in loaded), \
                f"the installed FFmpeg plugin was not loaded: {[p for p in loaded if 'Plugin' in p]}"
        assert proc.returncode == 0, lib.tail(proc.stderr)
        outs[who] = (a.read_bytes(), v.read_bytes())
    assert outs["installed"] == outs["in-tree"]
    assert len(outs["installed"][1]) == 125 * 320 * 240 * 3 // 2  # ffprobe: 125 frames of 320x240

    # A C program built with pkg-config from the installed tree (prefix moved to the scratch root).
    # libmediakit-dev puts mediakit.pc in pkg-config's multiarch folder (lintian's
    # pkg-config-unavailable-for-cross-compilation); the library stays in /usr/lib.
    pcs = sorted(usr.glob("lib/*/pkgconfig/mediakit.pc"))
    assert [p.parent.parent.name for p in pcs] == [sysconfig.get_config_var("MULTIARCH")], pcs
    pc_env = dict(BARE, PKG_CONFIG_PATH=str(pcs[0].parent))
    flags = lib.run(["pkg-config", f"--define-variable=prefix={usr}", "--cflags", "--libs", "mediakit"], env=pc_env)
    assert flags.returncode == 0, lib.tail(flags.stderr)
    program = work / "decode"
    build = subprocess.run(f"cc -std=c99 -Wall -Wextra -Werror {DECODE_C} {flags.stdout.decode().strip()} -o {program}",
                           shell=True, capture_output=True, text=True, env=pc_env)
    assert build.returncode == 0, build.stderr
    assert f"libmediakit.so.{version.split('.')[0]}" in _needed(program)
    reference = work / "decode-in-tree"
    build = subprocess.run(["cc", "-std=c99", "-I", lib.REPO / "Include", DECODE_C, "-L", mk_bin, "-lmediakit",
                            f"-Wl,-rpath,{mk_bin}", "-o", reference], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    c_out = {}
    for who, exe in (("installed", program), ("in-tree", reference)):
        v, a = work / f"c-{who}.nv12", work / f"c-{who}.pcm"
        proc = _run([exe, sample, v, a], work, env if who == "installed" else None)
        if who == "installed":
            _check_isolated(proc, root, "decode.c")
        assert proc.returncode == 0, lib.tail(proc.stderr)
        c_out[who] = (v.read_bytes(), a.read_bytes())
    assert c_out["installed"] == c_out["in-tree"] == outs["in-tree"][::-1]
