"""ffprobe without the libraries it never uses to read a file: a test-run copy that starts in half
the time, used only when it answers exactly as the installed ffprobe does.

The oracle suite starts ffprobe thousands of times, and most of each start (about 100 ms of CPU
here) is the dynamic loader binding libavdevice, libavfilter and libpostproc and their ~80
dependencies (SDL, X11, PulseAudio, JACK, OpenAL, Tesseract, ...). ffprobe reading a file calls
none of them: it registers the devices (`avdevice_register_all`), lists filters only for `-filters`
and prints their versions only in its banner. This module builds, once per test run, stand-ins
for those three libraries that export the symbols ffprobe asks for (under their symbol versions,
so the loader accepts them) and do nothing, and a copy of the installed ffprobe whose RPATH finds
the stand-ins first; everything else (libavformat, libavcodec, libavutil, libswresample,
libswscale and their dependencies) is the system's own, unchanged. The oracle is still the
installed FFmpeg: the same program and the same demuxers, parsers and decoders.

Before it is used the copy must give byte-for-byte the installed ffprobe's stdout, stderr and exit
status on the bundled sample (packets, frames, streams, format, an error), else the run uses the
installed ffprobe and says why. Device inputs (`-f lavfi`, `-f alsa` ...) would not open through
the copy: no test probes a device; ffmpeg itself is never replaced.
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

# The libraries ffprobe links but does not use to read files (FFmpeg's names; the major version is
# read from ffprobe's own DT_NEEDED entries).
UNUSED = ("avdevice", "avfilter", "postproc")


def _needed(binary: str) -> list[str]:
    out = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, timeout=30, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def _undefined(binary: str) -> dict[str, list[str]]:
    """ffprobe's undefined dynamic symbols by symbol version (`avdevice_register_all@LIBAVDEVICE_59`)."""
    out = subprocess.run(["nm", "-D", "--undefined-only", binary], capture_output=True, text=True, timeout=30,
                         check=True).stdout
    by_version: dict[str, list[str]] = {}
    for line in out.splitlines():
        m = re.match(r"\s*U (\w+)@+(\w+)$", line)
        if m:
            by_version.setdefault(m.group(2), []).append(m.group(1))
    return by_version


def _stand_in(symbol: str, soname: str) -> str:
    """C for one stand-in: `*_version` gives the real library's version (ffprobe's banner compares
    it with its own), `*_configuration` / `*_license` an empty string, everything else 0 (NULL, an
    empty list, "not supported"): nothing calls those while probing a file."""
    if symbol.endswith("_version"):
        real = getattr(ctypes.CDLL(soname), symbol)
        real.restype = ctypes.c_uint
        return f"unsigned {symbol}(void) {{ return {real()}u; }}\n"
    if symbol.endswith(("_configuration", "_license")):
        return f'const char *{symbol}(void) {{ return ""; }}\n'
    return f"long {symbol}(void) {{ return 0; }}\n"


def _build(real: str, dest: Path) -> None:
    needed, undefined = _needed(real), _undefined(real)
    built = 0
    for name in UNUSED:
        soname = next((n for n in needed if re.fullmatch(rf"lib{name}\.so\.\d+", n)), None)
        if soname is None:
            continue
        node = f"LIB{name.upper()}_{soname.rsplit('.', 1)[1]}"
        symbols = undefined.get(node, [])
        if not symbols:
            raise RuntimeError(f"ffprobe needs {soname} but no symbol of version {node}")
        src, vers = dest / f"{name}.c", dest / f"{name}.map"
        src.write_text("".join(_stand_in(s, soname) for s in symbols))
        vers.write_text(f"{node} {{ global: {'; '.join(symbols)}; local: *; }};\n")
        subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(dest / soname), f"-Wl,-soname,{soname}",
                        f"-Wl,--version-script={vers}", str(src)], capture_output=True, timeout=60, check=True)
        built += 1
    if built == 0:
        raise RuntimeError("ffprobe links none of libavdevice, libavfilter, libpostproc")
    shutil.copy2(real, dest / "ffprobe")
    # DT_RPATH (not RUNPATH): searched before the system's folders for ffprobe's own NEEDED entries.
    subprocess.run(["patchelf", "--force-rpath", "--set-rpath", str(dest), str(dest / "ffprobe")],
                   capture_output=True, timeout=60, check=True)


def _same_answers(real: str, copy: Path, sample: Path) -> str | None:
    """None when the copy answers as the installed ffprobe on every probe; else the first difference."""
    probes = [
        ["-v", "warning", "-show_packets", "-show_streams", "-show_format", "-of", "json"],
        ["-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames,codec_name", "-of", "csv=p=0"],
        ["-v", "error", "-show_frames", "-read_intervals", "%+#5", "-of", "compact"],
        ["-v", "info", "-hide_banner", "-show_format"],
    ]
    probes = [[*args, str(sample)] for args in probes] + [["-v", "error", "-show_format", str(sample) + ".missing"]]
    for args in probes:
        a = subprocess.run([real, *args], capture_output=True, timeout=60)
        b = subprocess.run([str(copy), *args], capture_output=True, timeout=60)
        if (a.returncode, a.stdout, _unaddressed(a.stderr)) != (b.returncode, b.stdout, _unaddressed(b.stderr)):
            return f"`ffprobe {' '.join(args)}` answers differently"
    return None


def _unaddressed(log: bytes) -> bytes:
    """A log without the context addresses FFmpeg prints (`[mp3 @ 0x5556b1949180]`: they change
    from run to run anyway)."""
    return re.sub(rb"@ 0x[0-9a-f]+\]", b"@ 0x]", log)


def install(work: Path, sample: Path) -> str:
    """Builds the copy in `work` and puts it first on PATH (for this process and its children,
    the xdist workers included); returns a line saying what was done, or why not."""
    if os.environ.get("MK_QUICK_FFPROBE") == "0":
        return "quick ffprobe: off (MK_QUICK_FFPROBE=0)"
    done = os.environ.get("MK_QUICK_FFPROBE_DIR")
    if done and (Path(done) / "ffprobe").is_file():
        return f"quick ffprobe: {done} (inherited)"
    real = shutil.which("ffprobe")
    if real is None:
        return "quick ffprobe: not used (no ffprobe on PATH)"
    for tool in ("cc", "patchelf", "readelf", "nm"):
        if shutil.which(tool) is None:
            return f"quick ffprobe: not used ({tool} is not installed)"
    work.mkdir(parents=True, exist_ok=True)
    try:
        _build(os.path.realpath(real), work)
    except (subprocess.SubprocessError, OSError, RuntimeError) as e:
        return f"quick ffprobe: not used (building it failed: {e})"
    problem = _same_answers(real, work / "ffprobe", sample)
    if problem:
        return f"quick ffprobe: not used ({problem}); the installed ffprobe answers"
    os.environ["PATH"] = f"{work}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ["MK_QUICK_FFPROBE_DIR"] = str(work)
    return f"quick ffprobe: {work / 'ffprobe'} (the installed one without {', '.join(UNUSED)}; same answers on {sample.name})"


STATE = ["quick ffprobe: not set up"]


def configure(config: pytest.Config, sample: Path) -> None:
    """A conftest's pytest_configure (trylast): builds the copy in a temporary folder once, in the
    first process (the xdist workers inherit PATH and MK_QUICK_FFPROBE_DIR), and prints the line
    saying whether it is used (the report header when not -q)."""
    if os.environ.get("MK_QUICK_FFPROBE_DIR") or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    work = Path(tempfile.mkdtemp(prefix="mk-quick-ffprobe-"))
    atexit.register(shutil.rmtree, work, True)
    STATE[0] = install(work, sample)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and config.get_verbosity() < 0:   # -q hides the report header
        reporter.write_line(STATE[0])
