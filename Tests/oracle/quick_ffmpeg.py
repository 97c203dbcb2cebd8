"""ffprobe and ffmpeg without the libraries they never use on a file: test-run copies that start in
about half the time, used only when they answer exactly as the installed tools do.

The oracle suite starts ffprobe and ffmpeg thousands of times, and most of each start (60 to 100
ms of CPU here) is the dynamic loader binding libraries and their ~200 dependencies. Reading or
writing files, ffprobe calls nothing in libavdevice, libavfilter or libpostproc (it registers the
devices, lists filters only for `-filters` and prints their versions only in its banner), and
ffmpeg calls nothing in libavdevice (device inputs and outputs: `-f lavfi`, `-f alsa`, `-f sdl`
...). Further down the tree the FFmpeg libraries link libraries for what no test asks of them
on a file (network protocols, Blu-ray, hardware device contexts, the SVG decoder, speech and LV2
filters: DEEP_UNUSED), which with their own dependencies are about 70 more of the libraries
loaded, and whose constructors ran at every start (ffmpeg 116 -> 48 ms of CPU, ffprobe 52 -> 31
ms to open the bundled sample, measured with `perf stat -r 30`). This module builds, once per
test run, stand-ins for those libraries that export the symbols the tool or the libraries that
stay loaded ask for, under their symbol versions, so the loader takes them (versions and
configuration strings answer what the real library answers; everything else does nothing), and
copies of the installed tools whose RPATH finds the stand-ins first. Everything else — libavformat,
libavcodec, libavutil, libswresample, libswscale, libavfilter for ffmpeg, the codec libraries
and what the demuxers' probes use — is the system's own: the oracle is still the installed
FFmpeg, the same programs with the same demuxers, parsers, decoders, encoders and filters.

`ffmpeg` on PATH is then a small launcher: a command line naming `lavfi` (the one device the
suites use, for test signals) or listing formats / devices runs the installed ffmpeg, any other
the copy. Before either copy is used it must give, byte for byte, the installed tool's stdout,
stderr (FFmpeg's context addresses aside: `[mp3 @ 0x55...]` changes from run to run anyway) and
exit status on the bundled sample; else the run uses the installed tools and says why.
`MK_QUICK_FFMPEG=0` turns it off.
"""
from __future__ import annotations

import atexit
import ctypes
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

# For each tool, the libraries it links but does not use on files (FFmpeg's names; the major
# version is read from the tool's own DT_NEEDED entries). ffmpeg's filters use libpostproc (pp).
UNUSED = {"ffprobe": ("avdevice", "avfilter", "postproc"), "ffmpeg": ("avdevice",)}

# Libraries further down the tree that FFmpeg's libraries link for what no test asks of them on a
# file: network protocols (TLS, SRT, RIST, SFTP, AMQP, ZeroMQ), Blu-ray discs, the Chromaprint
# muxer, hardware device contexts (VA-API, VDPAU, DRM, OpenCL, Intel Media SDK, Xlib), the SVG
# decoder (librsvg, Cairo, GLib), the codecs of formats neither ../shared/media nor a test command
# has (Codec 2, JPEG XL: its Highway constructor alone was a sixth of ffmpeg's start) and the
# encoder-only rav1e, Xvid, TwoLAME, shine and WebP wrappers (no test encodes with them), and for
# ffmpeg libavfilter's speech recognition and synthesis, LV2 hosts, Rubber Band, SOFA, Bauer
# stereo, vid.stab, libplacebo, libass, zimg and drawtext (FreeType, Fontconfig, FriBidi)
# filters. Their stand-ins export the symbols the other libraries ask for (functions that return
# 0, data that is zero), so the loader neither maps them nor their own dependencies (GnuTLS alone
# brings seven) nor runs their constructors.
# Libraries that can change what a file reads as (demuxers' probes: libgme, libopenmpt; the
# teletext decoder: libzvbi; libxml2 for DASH) stay the system's own.
_NO_TEST_USES = (
    "gnutls", "srt-gnutls", "rist", "ssh-gcrypt", "rabbitmq", "zmq", "bluray", "chromaprint", "va", "va-drm",
    "va-x11", "vdpau", "drm", "OpenCL", "mfx", "X11", "rsvg-2", "cairo", "glib-2.0", "gobject-2.0", "codec2", "jxl",
    "jxl_threads", "rav1e", "xvidcore", "twolame", "shine", "webp", "webpmux")
DEEP_UNUSED: dict[str, tuple[str, ...]] = {
    # ffprobe never encodes: also the encoders' libraries, which ffmpeg keeps (the tests encode with them).
    "ffprobe": _NO_TEST_USES + ("x264", "x265", "SvtAv1Enc", "theoraenc", "vorbisenc", "mp3lame"),
    "ffmpeg": _NO_TEST_USES + (
        "pocketsphinx", "sphinxbase", "flite", "flite_cmu_us_awb", "flite_cmu_us_kal", "flite_cmu_us_kal16",
        "flite_cmu_us_rms", "flite_cmu_us_slt", "lilv-0", "rubberband", "mysofa", "bs2b", "vidstab", "placebo",
        "ass", "zimg", "freetype", "fontconfig", "fribidi"),
}

# Arguments that send an ffmpeg command to the installed ffmpeg: the devices need libavdevice.
DEVICE_ARGS = ("lavfi", "-devices", "-formats", "-demuxers", "-muxers", "-sources", "-sinks")

LAUNCHER = r"""#include <stdio.h>
#include <string.h>
#include <unistd.h>
/* ffmpeg for the test suites (Tests/oracle/quick_ffmpeg.py): the installed one for devices. */
int main(int argc, char **argv) {
    static const char *device_args[] = { %(device_args)s, NULL };
    const char *path = "%(quick)s";
    for (int i = 1; i < argc; i++)
        for (const char **d = device_args; *d; d++)
            if (strcmp(argv[i], *d) == 0) path = "%(real)s";
    execv(path, argv);
    perror(path);
    return 127;
}
"""


def _needed(binary: str) -> list[str]:
    out = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, timeout=30, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def _undefined(binary: str) -> dict[str, list[str]]:
    """A binary's undefined dynamic symbols by symbol version (`avdevice_register_all@LIBAVDEVICE_59`)."""
    out = subprocess.run(["nm", "-D", "--undefined-only", binary], capture_output=True, text=True, timeout=30,
                         check=True).stdout
    by_version: dict[str, list[str]] = {}
    for line in out.splitlines():
        m = re.match(r"\s*U (\w+)@+(\w+)$", line)
        if m:
            by_version.setdefault(m.group(2), []).append(m.group(1))
    return by_version


def _c_string(value: bytes) -> str:
    return '"' + "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:03o}" for b in value) + '"'


def _stand_in(symbol: str, soname: str) -> str:
    """C for one stand-in: `*_version`, `*_configuration` and `*_license` give what the real
    library gives (the banner prints them and warns when they differ from the tool's own), every
    other function 0 (NULL, an empty list, "not supported"): nothing calls those on a file."""
    if symbol.endswith("_version"):
        real = getattr(ctypes.CDLL(soname), symbol)
        real.restype = ctypes.c_uint
        return f"unsigned {symbol}(void) {{ return {real()}u; }}\n"
    if symbol.endswith(("_configuration", "_license")):
        real = getattr(ctypes.CDLL(soname), symbol)
        real.restype = ctypes.c_char_p
        return f"const char *{symbol}(void) {{ return {_c_string(real())}; }}\n"
    return f"long {symbol}(void) {{ return 0; }}\n"


def _closure(real: str) -> dict[str, str]:
    """Every shared object `real` loads: soname -> path (`ldd`)."""
    out = subprocess.run(["ldd", real], capture_output=True, text=True, timeout=30, check=True).stdout
    return {m.group(1): m.group(2) for m in re.finditer(r"^\s*(\S+) => (/\S+)", out, re.M)}


def _per_file(args: list[str], paths: list[str], header: str) -> dict[str, str]:
    """One run of a binutils tool over many files: each file's part of the output (the parts
    start with `header` followed by the file's name)."""
    out = subprocess.run([*args, *paths], capture_output=True, text=True, timeout=120, check=True).stdout
    if len(paths) == 1:
        return {paths[0]: out}   # no header for a single file
    parts: dict[str, str] = {}
    for m in re.finditer(rf"^{header}\s*(\S+?):?\n(.*?)(?=^{header}|\Z)", out, re.M | re.S):
        parts[m.group(1)] = m.group(2)
    return parts


def _deep_stand_ins(tool: str, real: str, dest: Path) -> None:
    """Stand-ins in `dest` for `tool`'s DEEP_UNUSED libraries: each exports what the objects that
    stay loaded and name it in their NEEDED entries import from it, under the versions they
    require (an object binds the symbols of the libraries it needs)."""
    closure = _closure(real)
    stubbed = {soname: path for soname, path in closure.items()
               if any(re.fullmatch(rf"lib{re.escape(name)}\.so(\.[0-9]+)+", soname) for name in DEEP_UNUSED[tool])}
    if not stubbed:
        return
    kept = [real] + [path for soname, path in closure.items() if soname not in stubbed]
    dynamic = _per_file(["readelf", "-d", "-W"], kept, "File:")
    dependents = [path for path in kept
                  if set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic.get(path, ""))) & stubbed.keys()]
    # Imports (`U name@VERSION`) and the versions each dependent requires of each library.
    out = subprocess.run(["nm", "-D", "--undefined-only", "-A", *dependents], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    imports = {(m.group(1), m.group(3)) for m in re.finditer(r"^\S+:\s*[Uw] (\w+)(@+(\S+))?$", out, re.M)}
    nodes: dict[str, set[str]] = {soname: set() for soname in stubbed}
    for text in _per_file(["readelf", "-V", "-W"], dependents, "File:").values():
        for block in re.finditer(r"File: (\S+)\s+Cnt: \d+\n((?:\s+0x[0-9a-f]+:\s+Name: .*\n)*)", text):
            if block.group(1) in nodes:
                nodes[block.group(1)].update(re.findall(r"Name: (\S+)", block.group(2)))
    out = subprocess.run(["nm", "-D", "--defined-only", "-S", "-A", *stubbed.values()], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    defined: dict[str, dict[str, list[tuple[str | None, str, int]]]] = {path: {} for path in stubbed.values()}
    for m in re.finditer(r"^(\S+?):[0-9a-f]+ (?:([0-9a-f]+) )?(\w) (\w+)(@+(\S+))?$", out, re.M):
        defined[m.group(1)].setdefault(m.group(4), []).append((m.group(6), m.group(3), int(m.group(2) or "0", 16)))
    for soname, stub_path in stubbed.items():
        # An import names the version its library was linked against; an unversioned one any.
        exports: dict[str, tuple[str | None, str, int]] = {}
        for name, version in imports:
            hit = next((d for d in defined[stub_path].get(name, ()) if version is None or d[0] == version), None)
            if hit is not None:
                exports[name] = hit
        c: list[str] = []
        by_node: dict[str | None, list[str]] = {}
        for name, (version, kind, size) in sorted(exports.items()):
            c.append(f"long {name}(void) {{ return 0; }}\n" if kind in "TtWiI" else f"char {name}[{max(size, 1)}];\n")
            by_node.setdefault(version, []).append(name)
        for node in sorted(nodes[soname]):
            by_node.setdefault(node, [])
        anonymous = by_node.pop(None, [])
        if by_node:   # unversioned names beside versioned ones go into the first node
            first = next(iter(by_node))
            by_node[first] = by_node[first] + anonymous
            script = "".join(f"{node} {{ {'global: ' + '; '.join(names) + ';' if names else ''} }};\n"
                             for node, names in by_node.items())
        else:
            script = f"{{ global: {'; '.join(anonymous)}; local: *; }};\n" if anonymous else ""
        src, vers = dest / f"{soname}.c", dest / f"{soname}.map"
        src.write_text("".join(c) or "int mk_quick_ffmpeg_stand_in;\n")
        args = ["cc", "-shared", "-fPIC", "-O1", "-o", str(dest / soname), f"-Wl,-soname,{soname}", str(src)]
        if script:
            vers.write_text(script)
            args.insert(-1, f"-Wl,--version-script={vers}")
        subprocess.run(args, capture_output=True, timeout=60, check=True)

def _copy_without(tool: str, real: str, dest: Path) -> Path:
    """The stand-ins for `tool`'s unused libraries in `dest`, and a copy of the tool finding them."""
    dest.mkdir(parents=True, exist_ok=True)
    needed, undefined = _needed(real), _undefined(real)
    for name in UNUSED[tool]:
        soname = next((n for n in needed if re.fullmatch(rf"lib{name}\.so\.\d+", n)), None)
        if soname is None:
            continue
        node = f"LIB{name.upper()}_{soname.rsplit('.', 1)[1]}"
        symbols = undefined.get(node, [])
        if not symbols:
            raise RuntimeError(f"{tool} needs {soname} but no symbol of version {node}")
        src, vers = dest / f"{name}.c", dest / f"{name}.map"
        src.write_text("".join(_stand_in(s, soname) for s in symbols))
        vers.write_text(f"{node} {{ global: {'; '.join(symbols)}; local: *; }};\n")
        subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(dest / soname), f"-Wl,-soname,{soname}",
                        f"-Wl,--version-script={vers}", str(src)], capture_output=True, timeout=60, check=True)
    _deep_stand_ins(tool, real, dest)
    copy = dest / tool
    shutil.copy2(real, copy)
    # DT_RPATH (not RUNPATH): searched before the system's folders for the tool's own NEEDED entries.
    subprocess.run(["patchelf", "--force-rpath", "--set-rpath", str(dest), str(copy)],
                   capture_output=True, timeout=60, check=True)
    return copy


def _launcher(real: str, quick: Path, dest: Path) -> Path:
    src = dest.parent / "ffmpeg-launcher.c"
    src.write_text(LAUNCHER % {"device_args": ", ".join(f'"{a}"' for a in DEVICE_ARGS), "quick": quick, "real": real})
    out = dest / "ffmpeg"
    subprocess.run(["cc", "-O1", "-o", str(out), str(src)], capture_output=True, timeout=60, check=True)
    return out


def _unaddressed(log: bytes) -> bytes:
    """A log without what changes from run to run: the context addresses FFmpeg prints
    (`[mp3 @ 0x5556b1949180]`) and the speed in ffmpeg's last progress line."""
    return re.sub(rb"speed=\s*[0-9.]+x", b"speed=x", re.sub(rb"@ 0x[0-9a-f]+\]", b"@ 0x]", log))


def _differs(real: str, quick: Path, commands: list[list[str]]) -> str | None:
    """None when `quick` answers every command as `real` does; else the first that differs."""
    for args in commands:
        a = subprocess.run([real, *args], capture_output=True, timeout=120)
        b = subprocess.run([str(quick), *args], capture_output=True, timeout=120)
        if (a.returncode, a.stdout, _unaddressed(a.stderr)) != (b.returncode, b.stdout, _unaddressed(b.stderr)):
            return f"`{Path(real).name} {' '.join(args)}` answers differently"
    return None


def install(work: Path, sample: Path) -> str:
    """Builds the copies in `work` and puts them first on PATH (for this process and its children,
    the xdist workers included); returns a line saying what was done, or why not."""
    if os.environ.get("MK_QUICK_FFMPEG") == "0":
        return "quick ffmpeg / ffprobe: off (MK_QUICK_FFMPEG=0)"
    for tool in ("cc", "patchelf", "readelf", "nm", "ffmpeg", "ffprobe"):
        if shutil.which(tool) is None:
            return f"quick ffmpeg / ffprobe: not used ({tool} is not installed)"
    ffprobe, ffmpeg = (os.path.realpath(shutil.which(t) or t) for t in ("ffprobe", "ffmpeg"))
    s = str(sample)
    try:
        quick_probe = _copy_without("ffprobe", ffprobe, work / "ffprobe-libs")
        quick_mpeg = _copy_without("ffmpeg", ffmpeg, work / "ffmpeg-libs")
        problem = _differs(ffprobe, quick_probe, [
            ["-v", "warning", "-show_packets", "-show_streams", "-show_format", "-show_chapters", "-of", "json", s],
            ["-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames,codec_name", "-of", "csv=p=0", s],
            ["-v", "error", "-show_frames", "-read_intervals", "%+#5", "-of", "compact", s],
            ["-show_format", s],                                     # the banner
            ["-v", "error", "-show_format", s + ".missing"],
        ]) or _differs(ffmpeg, quick_mpeg, [
            ["-nostdin", "-nostats", "-i", s, "-t", "1", "-f", "framemd5", "-"],   # the banner, decoding
            ["-v", "error", "-i", s, "-t", "1", "-vf", "scale=64:36", "-pix_fmt", "rgb24", "-f", "framemd5", "-"],
            ["-v", "error", "-i", s, "-t", "1", "-c", "copy", "-f", "matroska", "-fflags", "+bitexact", "-"],
            ["-v", "error", "-i", s, "-t", "1", "-c:a", "aac", "-vn", "-f", "adts", "-"],
            ["-v", "error", "-i", s + ".missing", "-f", "null", "-"],
        ])
        if problem:
            return f"quick ffmpeg / ffprobe: not used ({problem}); the installed tools answer"
        bin_dir = work / "bin"
        bin_dir.mkdir()
        os.symlink(quick_probe, bin_dir / "ffprobe")
        _launcher(ffmpeg, quick_mpeg, bin_dir)
    except (subprocess.SubprocessError, OSError, RuntimeError) as e:
        return f"quick ffmpeg / ffprobe: not used (building them failed: {e})"
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ["MK_QUICK_FFMPEG_DIR"] = str(bin_dir)
    return (f"quick ffmpeg / ffprobe: {bin_dir} (the installed tools without libavdevice, the network, "
            f"hardware, speech and unused codec libraries; ffprobe without libavfilter and libpostproc "
            f"too; same answers on {sample.name})")


STATE = ["quick ffmpeg / ffprobe: not set up"]


def configure(config: pytest.Config, sample: Path) -> None:
    """A conftest's pytest_configure (trylast): builds the copies in a temporary folder once, in
    the first process (the xdist workers inherit PATH and MK_QUICK_FFMPEG_DIR), and prints the
    line saying whether they are used (the report header when not -q)."""
    if os.environ.get("MK_QUICK_FFMPEG_DIR") or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    work = Path(tempfile.mkdtemp(prefix="mk-quick-ffmpeg-"))
    atexit.register(shutil.rmtree, work, True)
    STATE[0] = install(work, sample)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and config.get_verbosity() < 0:   # -q hides the report header
        reporter.write_line(STATE[0])
