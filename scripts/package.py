#!/usr/bin/env python3
"""Installs and packages a MediaKit build: `make install`, `make deb` and `make wheel` run this.

    package.py install BIN PREFIX DESTDIR VERSION   the C library as distributions ship one
    package.py deb     BIN OUTDIR VERSION           .debs from an install staged with PREFIX=/usr
    package.py wheel   BIN OUTDIR VERSION           dist/mediakit-VERSION-py3-none-PLATFORM.whl

BIN is a SwiftPM release folder (libmediakit.so, libMediaKitPlugin*.so, mk-*). Nothing installed
points into the toolchain or the checkout: the Swift runtime libraries the build needs (found
with ldd, wherever the toolchain is) are copied beside the library and every ELF file's RUNPATH
is rewritten relative to $ORIGIN with patchelf. The installed layout (PREFIX):

    lib/libmediakit.so.X.Y.Z          soname libmediakit.so.X, RUNPATH $ORIGIN/mediakit/swift
    lib/libmediakit.so.X -> .X.Y.Z    lib/libmediakit.so -> .X (the link programs are built against)
    lib/mediakit/swift/*.so           the Swift runtime (RUNPATH $ORIGIN)
    lib/mediakit/plugins/*.so         the codec plugins (RUNPATH $ORIGIN/../swift), where
                                      libmediakit and the tools look with no environment variable
    bin/mk-*                          the tools (RUNPATH $ORIGIN/../lib/mediakit/swift)
    include/mediakit/*.h, lib/pkgconfig/mediakit.pc

The soname is set here, on the installed copy, not by the linker in the build: programs the tests
build against the build folder (-L BIN -lmediakit) would otherwise need a libmediakit.so.X there.
"""
from __future__ import annotations

import base64
import csv
import functools
import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SYSTEM_DIRS = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/")


def die(msg: str) -> None:
    raise SystemExit(f"package: error: {msg}")


def run(cmd: list[str], **kw: object) -> str:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)  # type: ignore[call-overload]
    if proc.returncode != 0:
        die(f"{' '.join(map(str, cmd))}: {proc.stderr.strip() or proc.stdout.strip()}")
    return str(proc.stdout)


def need(tool: str, package: str) -> None:
    if shutil.which(tool) is None:
        die(f"{tool} is missing: apt-get install {package} (scripts/deps.sh installs it)")


# --- the build's files ------------------------------------------------------------------------

def built(bin_dir: Path) -> tuple[Path, list[Path], list[Path]]:
    """libmediakit.so, the plugins and the tools of a build folder."""
    lib = bin_dir / "libmediakit.so"
    if not lib.is_file():
        die(f"{lib}: no such file (build first, or give FROM=BINDIR)")
    plugins = sorted(bin_dir.glob("libMediaKitPlugin*.so"))
    tools = sorted(p for p in bin_dir.glob("mk-*") if p.is_file() and os.access(p, os.X_OK) and p.suffix == "")
    if not plugins or not tools:
        die(f"{bin_dir}: no plugins or no mk-* tools")
    return lib, plugins, tools


def needed(path: Path) -> list[str]:
    """The DT_NEEDED sonames of an ELF file."""
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run(["readelf", "-d", path]))


def resolved(path: Path) -> dict[str, str]:
    """soname -> the file ldd resolves it to (as this build runs here)."""
    out: dict[str, str] = {}
    for line in run(["ldd", path]).splitlines():
        m = re.match(r"\s*(\S+) => (\S+) \(", line)
        loader = re.match(r"\s*(/\S+) \(", line)  # the dynamic loader: "/lib64/ld-linux-x86-64.so.2 (0x...)"
        if m:
            out[m.group(1)] = m.group(2)
        elif loader:
            out[Path(loader.group(1)).name] = loader.group(1)
        elif "not found" in line:
            die(f"{path}: {line.strip()}")
    return out


def swift_runtime(files: list[Path]) -> list[Path]:
    """The Swift runtime libraries the files load (with what those load): every library ldd
    resolves into libswiftCore.so's folder."""
    found: dict[str, Path] = {}
    for f in files:
        libs = resolved(f)
        core = libs.get("libswiftCore.so")
        if core is None:
            continue
        home = Path(core).resolve().parent
        for name, where in libs.items():
            if Path(where).resolve().parent == home:
                found[name] = Path(where)
    if "libswiftCore.so" not in found:
        die("the build does not load libswiftCore.so: cannot find the Swift runtime")
    return [found[k] for k in sorted(found)]


def set_elf(path: Path, runpath: str, soname: str | None = None) -> None:
    need("patchelf", "patchelf")
    if soname:
        run(["patchelf", "--set-soname", soname, path])
    run(["patchelf", "--set-rpath", runpath, path])


def strip(path: Path) -> None:
    """Debug symbols and the symbol table out (what dh_strip does for a .deb); the dynamic
    symbols the loader needs stay."""
    run(["strip", "--strip-unneeded", "--remove-section=.comment", path])


def copy(src: Path, dest: Path, mode: int) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".part")
    shutil.copyfile(src, tmp)
    os.chmod(tmp, mode)
    tmp.replace(dest)


# --- make install -----------------------------------------------------------------------------

def pc_text(prefix: str, version: str, runtime: list[Path]) -> str:
    libs = " ".join("-l" + p.name[3:-3] for p in runtime if p.name.endswith(".so"))
    text = (REPO / "Include" / "mediakit.pc.in").read_text()
    return (text.replace("@PREFIX@", prefix).replace("@VERSION@", version)
            .replace("@SWIFT_LIBS@", libs))


def install(bin_dir: Path, prefix: str, destdir: str, version: str) -> Path:
    """The installed tree under DESTDIR/PREFIX; returns that folder."""
    lib, plugins, tools = built(bin_dir)
    major = version.split(".")[0]
    root = Path(destdir + prefix) if destdir else Path(prefix)
    libdir = root / "lib"
    runtime = swift_runtime([lib, *plugins, *tools])
    real = libdir / f"libmediakit.so.{version}"
    copy(lib, real, 0o644)
    set_elf(real, "$ORIGIN/mediakit/swift", soname=f"libmediakit.so.{major}")
    for link, target in ((f"libmediakit.so.{major}", real.name), ("libmediakit.so", f"libmediakit.so.{major}")):
        tmp = libdir / (link + ".part")
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(target)
        tmp.replace(libdir / link)
    for r in runtime:
        copy(r, libdir / "mediakit" / "swift" / r.name, 0o644)
        set_elf(libdir / "mediakit" / "swift" / r.name, "$ORIGIN")
    for p in plugins:
        copy(p, libdir / "mediakit" / "plugins" / p.name, 0o644)
        set_elf(libdir / "mediakit" / "plugins" / p.name, "$ORIGIN/../swift")
    for t in tools:
        copy(t, root / "bin" / t.name, 0o755)
        set_elf(root / "bin" / t.name, "$ORIGIN/../lib/mediakit/swift")
    for h in sorted((REPO / "Include" / "mediakit").glob("*.h")):
        copy(h, root / "include" / "mediakit" / h.name, 0o644)
    pc = libdir / "pkgconfig" / "mediakit.pc"
    pc.parent.mkdir(parents=True, exist_ok=True)
    pc.write_text(pc_text(prefix, version, runtime))
    return root


# --- make deb ---------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def owner(where: str) -> str:
    """The Debian package that ships a library file (dpkg -S), under the path ldd gave, the
    resolved one, or the other side of the /lib -> /usr/lib merge. Each `dpkg -S` reads dpkg's
    whole database (~0.1 s), and the same libraries are needed by many files: asked once each."""
    real = os.path.realpath(where)
    tries = [where, real, re.sub(r"^/usr/lib/", "/lib/", real), re.sub(r"^/lib/", "/usr/lib/", real)]
    for path in dict.fromkeys(tries):
        proc = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        if proc.returncode == 0:
            return proc.stdout.split(":")[0].strip()
    die(f"no Debian package ships {where} (dpkg -S)")
    return ""


def shlibs_entry(soname: str, where: str) -> str:
    """The Depends entry for a system library, as its package's shlibs file states it (what
    dpkg-shlibdeps reads), else the package's name."""
    pkg = owner(where)
    m = re.match(r"(.+)\.so\.(\d+)$", soname) or re.match(r"(.+)-([\d.]+)\.so$", soname)
    info = Path("/var/lib/dpkg/info")
    for f in sorted(info.glob(f"{pkg}.shlibs")) + sorted(info.glob(f"{pkg}:*.shlibs")):
        for line in f.read_text().splitlines():
            parts = line.split(None, 2)
            if m and len(parts) == 3 and parts[0] == m.group(1) and parts[1] == m.group(2):
                return parts[2].strip()
    return pkg


def depends_of(files: list[Path], provided: set[str], search: dict[str, str]) -> list[str]:
    """Depends entries for the system libraries the files need and the package set lacks."""
    out: set[str] = set()
    for f in files:
        for soname in needed(f):
            if soname in provided:
                continue
            where = search.get(soname)
            if where is None or not where.startswith(SYSTEM_DIRS):
                die(f"{f.name} needs {soname}, which neither the packages nor the system provide")
            out.add(shlibs_entry(soname, where))
    return sorted(out)


def elf_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()
                  and p.read_bytes()[:4] == b"\x7fELF")


def man_page(tool: Path, version: str) -> bytes:
    """A section-1 manual page for an mk-* tool, gzipped as Debian ships them: NAME from the first
    sentence of its --help overview, the rest of --help verbatim (no-fill), so the page says what
    the tool itself says and cannot drift from it."""
    env = {**os.environ, "COLUMNS": "80", "MEDIAKIT_NO_DEFAULT_PLUGINS": "1"}
    proc = subprocess.run([str(tool), "--help"], capture_output=True, env=env, timeout=60)
    text = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0 or "USAGE:" not in text:
        die(f"{tool.name} --help failed (exit {proc.returncode}): {proc.stderr.decode(errors='replace')[-300:]}")
    overview = text.split("\n\n", 1)[0].removeprefix("OVERVIEW:").strip().replace("\n", " ")
    summary = overview.split(". ")[0].rstrip(".")

    def roff(line: str) -> str:
        line = line.replace("\\", "\\e").replace("-", "\\-")
        return "\\&" + line if line.startswith((".", "'")) else line

    name = tool.name
    body = [f'.TH {name.upper()} 1 "" "MediaKit {version}" "User Commands"',
            ".SH NAME", f"{name} \\- {roff(summary[0].lower() + summary[1:])}",
            ".SH DESCRIPTION", ".nf"]
    body += [roff(l.rstrip()) for l in text.rstrip().splitlines()]
    body += [".fi", ".SH SEE ALSO", "The MediaKit README and docs/ folder."]
    return gzip.compress(("\n".join(body) + "\n").encode(), compresslevel=9, mtime=0)


def multiarch() -> str:
    """The Debian multiarch triplet (x86_64-linux-gnu), where pkg-config files belong."""
    import sysconfig
    return sysconfig.get_config_var("MULTIARCH") or run(["gcc", "-print-multiarch"]).strip()


MAINTAINER = os.environ.get("DEB_MAINTAINER", "MediaKit maintainers <maintainers@mediakit.example.org>")


def deb(bin_dir: Path, outdir: Path, version: str) -> list[Path]:
    need("dpkg-deb", "dpkg")
    lib, plugins, tools = built(bin_dir)
    search: dict[str, str] = {}
    for f in (lib, *plugins, *tools):
        search.update(resolved(f))
    arch = run(["dpkg", "--print-architecture"]).strip()
    major = version.split(".")[0]
    libpkg = f"libmediakit{major}"
    pin = f"{libpkg} (= {version})"
    outdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mediakit-deb-") as tmp:
        staged = install(bin_dir, "/usr", str(Path(tmp) / "staged"), version)
        for f in elf_files(staged):
            strip(f)
        u = "usr"
        packages: dict[str, dict[str, object]] = {
            libpkg: {"paths": [f"{u}/lib/libmediakit.so.{major}", f"{u}/lib/libmediakit.so.{version}", f"{u}/lib/mediakit/swift"],
                     "section": "libs", "depends": [],
                     "summary": "MediaKit media SDK: the C library (with the Swift runtime it needs)",
                     "text": "Demuxers, muxers and the codec plugin host of MediaKit, with its C API.\n"
                             "The Swift runtime libraries it was built with are installed privately\n"
                             "in /usr/lib/mediakit/swift. The codec plugins are in mediakit-plugins-*."},
            "libmediakit-dev": {"paths": [f"{u}/lib/libmediakit.so", f"{u}/include", f"{u}/lib/pkgconfig"],
                                "section": "libdevel", "depends": [pin],
                                "summary": "MediaKit media SDK: C headers and pkg-config file",
                                "text": "The headers of MediaKit's C API and mediakit.pc\n"
                                        "(cc prog.c $(pkg-config --cflags --libs mediakit))."},
            "mediakit-tools": {"paths": [f"{u}/bin"], "section": "video", "depends": [pin],
                               "summary": "MediaKit media SDK: the mk-* command line tools",
                               "text": "mk-probe, mk-decode, mk-remux, mk-transcode, mk-audioconv, mk-stream and mk-tag."},
        }
        for p in plugins:
            name = p.name[len("libMediaKitPlugin"):-3].lower()
            packages[f"mediakit-plugins-{name}"] = {
                "paths": [f"{u}/lib/mediakit/plugins/{p.name}"], "section": "libs", "depends": [pin],
                "summary": f"MediaKit media SDK: the {name} codec plugin",
                "text": f"The {p.name[len('libMediaKitPlugin'):-3]} codec plugin, found by libmediakit and the tools\n"
                        "in /usr/lib/mediakit/plugins."}
        packages["mediakit-tools"]["recommends"] = [f"mediakit-plugins-{p.name[17:-3].lower()}" for p in plugins]
        provided = {p.name for p in (staged / "lib" / "mediakit" / "swift").iterdir()} | {f"libmediakit.so.{major}"}
        claimed: set[Path] = set()
        debs = []
        changelog = gzip.compress(f"mediakit ({version}) unstable; urgency=medium\n\n  * Built from the MediaKit "
                                  f"source tree (see CHANGELOG.md).\n\n -- {MAINTAINER}  "
                                  f"Thu, 01 Jan 1970 00:00:00 +0000\n".encode(), mtime=0)
        for name, spec in packages.items():
            root = Path(tmp) / name
            for rel in spec["paths"]:  # type: ignore[attr-defined]
                src = Path(tmp) / "staged" / rel
                dest = root / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                if src.is_symlink() or src.is_file():
                    shutil.copy2(src, dest, follow_symlinks=False)
                    claimed.add(src)
                else:
                    shutil.copytree(src, dest, symlinks=True)
                    claimed.update(src.rglob("*"))
            if name == "libmediakit-dev":
                # pkg-config's per-architecture folder, where a cross build finds it (the
                # library stays in /usr/lib, which the .pc file names).
                pc = root / u / "lib" / multiarch() / "pkgconfig"
                pc.parent.mkdir(parents=True)
                (root / u / "lib" / "pkgconfig").rename(pc)
            if name == "mediakit-tools":
                man = root / u / "share" / "man" / "man1"
                man.mkdir(parents=True)
                for tool in sorted((Path(tmp) / "staged" / u / "bin").iterdir()):
                    (man / f"{tool.name}.1.gz").write_bytes(man_page(tool, version))
            doc = root / "usr" / "share" / "doc" / name
            doc.mkdir(parents=True)
            (doc / "copyright").write_text(
                "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
                "Upstream-Name: MediaKit\n\nFiles: *\nCopyright: 2026 the MediaKit authors\n"
                "License: MIT\n The license Bindings/python/pyproject.toml declares. The Swift runtime\n"
                " libraries in /usr/lib/mediakit/swift are Apache-2.0 with the Runtime Library Exception\n"
                " (swift.org).\n")
            (doc / "changelog.gz").write_bytes(changelog)  # a native package's (version without revision)
            files = elf_files(root)
            depends = list(spec["depends"]) + depends_of(files, provided, search)  # type: ignore[call-overload]
            size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) // 1024
            control = [f"Package: {name}", f"Version: {version}", f"Architecture: {arch}",
                       f"Maintainer: {MAINTAINER}", f"Installed-Size: {size}",
                       f"Section: {spec['section']}", "Priority: optional",
                       "Depends: " + ", ".join(depends) if depends else None,
                       "Recommends: " + ", ".join(spec["recommends"]) if spec.get("recommends") else None,  # type: ignore[arg-type]
                       "Homepage: https://example.invalid/mediakit",
                       f"Description: {spec['summary']}"] + [" " + (l or ".") for l in str(spec["text"]).splitlines()]
            (root / "DEBIAN").mkdir()
            (root / "DEBIAN" / "control").write_text("\n".join(l for l in control if l) + "\n")
            if name == libpkg:
                (root / "DEBIAN" / "shlibs").write_text(f"libmediakit {major} {libpkg} (>= {version})\n")
                (root / "DEBIAN" / "triggers").write_text("activate-noawait ldconfig\n")
            for d in root.rglob("*"):
                if d.is_dir():
                    d.chmod(0o755)
            out = outdir / f"{name}_{version}_{arch}.deb"
            run(["dpkg-deb", "--root-owner-group", "-Zgzip", "-z6", "--build", root, out])
            debs.append(out)
        left = [p for p in (Path(tmp) / "staged").rglob("*") if (p.is_file() or p.is_symlink()) and p not in claimed]
        if left:
            die(f"files no package ships: {[str(p) for p in left]}")
    return debs


# --- make wheel -------------------------------------------------------------------------------

TOOL_COMMANDS = {"probe": "mk-probe", "decode": "mk-decode", "remux": "mk-remux", "transcode": "mk-transcode",
                 "audioconv": "mk-audioconv", "stream": "mk-stream", "tag": "mk-tag"}


def glibc_needed(files: list[Path]) -> tuple[int, int]:
    """The highest GLIBC_x.y symbol version the files require (objdump -T)."""
    best = (2, 17)
    for f in files:
        for m in re.finditer(r"\bGLIBC_(\d+)\.(\d+)", run(["objdump", "-T", f])):
            best = max(best, (int(m.group(1)), int(m.group(2))))
    return best


def wheel(bin_dir: Path, outdir: Path, version: str) -> Path:
    """The wheel: the package, its _lib (library, plugins, Swift runtime, tools; RUNPATH $ORIGIN)
    and the system libraries the plugins need named with their Debian packages (_system_libs.txt)."""
    lib, plugins, tools = built(bin_dir)
    runtime = swift_runtime([lib, *plugins, *tools])
    search: dict[str, str] = {}
    for f in (lib, *plugins, *tools):
        search.update(resolved(f))
    arch = os.uname().machine
    with tempfile.TemporaryDirectory(prefix="mediakit-wheel-") as tmp:
        stage = Path(tmp) / "mediakit" / "_lib"
        for src, mode in [(lib, 0o644), *[(p, 0o644) for p in plugins], *[(r, 0o644) for r in runtime],
                          *[(t, 0o755) for t in tools]]:
            copy(src, stage / src.name, mode)
            set_elf(stage / src.name, "$ORIGIN")
            strip(stage / src.name)
        shipped = {p.name for p in stage.iterdir()}
        lines = []
        for p in plugins:
            for soname in needed(p):
                where = search.get(soname, "")
                if soname in shipped or soname.startswith(("libc.so", "libm.so", "ld-linux")):
                    continue
                lines.append(f"{p.name} {soname} {owner(where)}")
        (stage / "_system_libs.txt").write_text(
            "# plugin, a system library it needs, the Debian package that ships it (scripts/package.py wheel)\n"
            + "\n".join(lines) + "\n")
        # The tag: linux_<arch>, not manylinux_<glibc>: the glibc part would hold (the highest
        # GLIBC_ symbol version the files need, read below, is Debian 12's), but the plugins link
        # the system's FFmpeg, dav1d, Opus and Vorbis libraries, which the manylinux policy does
        # not allow outside the wheel (auditwheel show says the same). The glibc need is stated
        # in the metadata's summary and in _system_libs.txt.
        major, minor = glibc_needed(elf_files(stage))
        with (stage / "_system_libs.txt").open("a") as f:
            f.write(f"# glibc {major}.{minor} (the highest GLIBC_ symbol version these files need)\n")
        tag = f"py3-none-linux_{arch}"
        name = f"mediakit-{version}-{tag}.whl"
        dist = f"mediakit-{version}.dist-info"
        readme = (REPO / "Bindings" / "python" / "README.md").read_text()
        entries: dict[str, tuple[bytes, int]] = {}
        pkg_src = REPO / "Bindings" / "python" / "mediakit"
        for f in sorted(pkg_src.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts and f.name != "_build_info.py" and f.parent.name != "_lib":
                entries[f"mediakit/{f.relative_to(pkg_src)}"] = (f.read_bytes(), 0o644)
        for f in sorted(stage.iterdir()):
            entries[f"mediakit/_lib/{f.name}"] = (f.read_bytes(), f.stat().st_mode & 0o777)
        entries[f"{dist}/METADATA"] = ((
            f"Metadata-Version: 2.1\nName: mediakit\nVersion: {version}\n"
            f"Summary: MediaKit, a media SDK for Linux (glibc >= {major}.{minor}): demux, decode, remux and transcode\n"
            "License: MIT\nRequires-Python: >=3.9\nProvides-Extra: numpy\nRequires-Dist: numpy; extra == \"numpy\"\n"
            "Description-Content-Type: text/markdown\n\n" + readme).encode(), 0o644)
        entries[f"{dist}/WHEEL"] = ((f"Wheel-Version: 1.0\nGenerator: mediakit scripts/package.py\n"
                                     f"Root-Is-Purelib: false\nTag: {tag}\n").encode(), 0o644)
        scripts = "".join(f"{tool} = mediakit.__main__:{tool.replace('-', '_')}\n" for tool in TOOL_COMMANDS.values())
        entries[f"{dist}/entry_points.txt"] = (f"[console_scripts]\n{scripts}".encode(), 0o644)
        entries[f"{dist}/top_level.txt"] = (b"mediakit\n", 0o644)
        record = io.StringIO()
        writer = csv.writer(record, lineterminator="\n")
        for path, (data, _) in entries.items():
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            writer.writerow([path, f"sha256={digest}", len(data)])
        writer.writerow([f"{dist}/RECORD", "", ""])
        entries[f"{dist}/RECORD"] = (record.getvalue().encode(), 0o644)
        outdir.mkdir(parents=True, exist_ok=True)
        part = outdir / (name + ".part")
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
            for path, (data, mode) in entries.items():
                info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = (0o100000 | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, data)
        part.replace(outdir / name)
    return outdir / name


def main(argv: list[str]) -> int:
    if argv[:1] == ["install"] and len(argv) == 5:
        root = install(Path(argv[1]), argv[2], argv[3], argv[4])
        print(f"package: installed under {root}")
    elif argv[:1] == ["deb"] and len(argv) == 4:
        for d in deb(Path(argv[1]), Path(argv[2]), argv[3]):
            print(f"package: {d}")
    elif argv[:1] == ["wheel"] and len(argv) == 4:
        print(f"package: {wheel(Path(argv[1]), Path(argv[2]), argv[3])}")
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
