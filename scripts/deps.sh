#!/usr/bin/env bash
# Installs, when missing, every Debian package that MediaKit's build, tests and
# benchmarks need. Idempotent: when everything is there it only checks and exits.
# Prints one line per thing it installs, nothing else unless something fails.
#
# Usage: scripts/deps.sh        (make deps runs it; root, or sudo, for apt-get)
set -euo pipefail

# Debian packages, and why:
#   pkg-config libavcodec-dev libavformat-dev libavutil-dev libswscale-dev
#                                             build of the FFmpeg plugin (decoders, pixel format conversion)
#   libdav1d-dev libopus-dev libvorbis-dev    build of the other codec plugins
#   ffmpeg                                    ffmpeg/ffprobe/ffplay: oracles, test media, bench
#   dav1d mediainfo                           oracles (ORACLES.md)
#   flac                                      flac/metaflac: FLAC files from libFLAC's reference encoder (test_flac.py)
#   gstreamer1.0-tools gstreamer1.0-plugins-good gstreamer1.0-plugins-base-apps
#                                             gst-launch-1.0, qtdemux, gst-discoverer-1.0 (oracles)
#   gstreamer1.0-libav                        decoders, so gst-discoverer-1.0 fully opens remuxed H.264/HEVC/AAC files
#   valgrind                                  instruction counts, leak checks
#                                             (Tests/plugin_harness/run_valgrind.sh)
#   binutils                                  nm: the oracle suite checks plugin exports; readelf, objdump, strip:
#                                             make deb / wheel (dpkg-deb, dpkg -S: dpkg itself, always there)
#   strace                                    the oracle suite counts how often mk-decode opens its input
#   time                                      GNU /usr/bin/time for scripts/bench.sh
#   hyperfine                                 repeated timings of short commands (bench_capi.sh)
#   mkvtoolnix                                mkvmerge (laced Matroska test inputs), mkvinfo (reads our Matroska output)
#   opus-tools vorbis-tools                   opusinfo / ogginfo: validate the Ogg muxer's files (test_ogg_mux.py)
#   patchelf                                  make install / deb / wheel: the soname and $ORIGIN RUNPATHs of installed files
#   lintian                                   make deb checks the packages it builds
#   man-db                                    man: the oracle suite renders the packaged manual pages
#   libsndfile1                               libsndfile: an AIFF reader not MediaKit's, the oracle of INST
#                                             chunks (SFC_GET_INSTRUMENT, test_metadata_api.py)
PACKAGES=(
    pkg-config libavcodec-dev libavformat-dev libavutil-dev libswscale-dev
    libdav1d-dev libopus-dev libvorbis-dev
    ffmpeg dav1d mediainfo flac
    gstreamer1.0-tools gstreamer1.0-plugins-good gstreamer1.0-plugins-base-apps gstreamer1.0-libav
    valgrind time hyperfine binutils strace mkvtoolnix opus-tools vorbis-tools
    patchelf lintian man-db libsndfile1
)

say() { printf 'deps: %s\n' "$*"; }
die() { printf 'deps: error: %s\n' "$*" >&2; exit 1; }

# Swift is not a Debian package: it is expected at /opt/swift (or on PATH).
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi
if ! swift --version >/dev/null 2>&1; then
    die "swift not found (expected /opt/swift/usr/bin/swift or swift on PATH); install a Swift 6 toolchain first"
fi

is_installed() {
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)" = "installed" ]
}

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo)
    fi
fi

APT_UPDATED=0
LOG="$(mktemp "${TMPDIR:-/tmp}/mediakit-deps.XXXXXX")"
trap 'rm -f "$LOG"' EXIT

apt_install() {  # apt_install PKG...: installs the named packages, quietly
    if [ "$(id -u)" -ne 0 ] && [ "${#SUDO[@]}" -eq 0 ]; then
        die "missing packages: $*; run this script as root or install sudo"
    fi
    if [ "$APT_UPDATED" -eq 0 ]; then
        if ! "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$LOG" 2>&1; then
            cat "$LOG" >&2
            die "apt-get update failed"
        fi
        APT_UPDATED=1
    fi
    if ! "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq --no-install-recommends "$@" >"$LOG" 2>&1; then
        cat "$LOG" >&2
        die "apt-get install $* failed"
    fi
}

MISSING=()
for pkg in "${PACKAGES[@]}"; do
    is_installed "$pkg" || MISSING+=("$pkg")
done

# python3: use the one already on PATH (pyenv, /usr/bin, ...); install Debian's only if none.
if ! command -v python3 >/dev/null 2>&1; then
    MISSING+=(python3)
fi

if [ "${#MISSING[@]}" -gt 0 ]; then
    apt_install "${MISSING[@]}"
    for pkg in "${MISSING[@]}"; do
        say "installed $pkg"
    done
fi

# venv, for the wheel test (Tests/oracle/test_wheel.py installs `make wheel`'s wheel into a fresh venv):
# Debian's own python3 ships it apart, as python3-venv.
if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c "import ensurepip" >/dev/null 2>&1; then
    apt_install python3-venv
    say "installed python3-venv"
fi

# pytest, for the oracle suite (Tests/oracle).
if ! python3 -m pytest --version >/dev/null 2>&1; then
    if python3 -m pip --version >/dev/null 2>&1 \
            && python3 -m pip install --quiet pytest >"$LOG" 2>&1; then
        say "installed pytest (pip, $(command -v python3))"
    else
        # Debian's own python3 refuses pip installs (PEP 668): use its package.
        apt_install python3-pytest
        say "installed python3-pytest"
    fi
    python3 -m pytest --version >/dev/null 2>&1 \
        || die "pytest is still not importable by $(command -v python3)"
fi

# pytest-xdist: the oracle suite runs its cases on every core (`pytest -n auto`), which keeps
# `make test` within its 15 minutes on a 2-core machine. Debian packages it as python3-pytest-xdist.
if ! python3 -c "import xdist" >/dev/null 2>&1; then
    if python3 -m pip --version >/dev/null 2>&1 \
            && python3 -m pip install --quiet pytest-xdist >"$LOG" 2>&1; then
        say "installed pytest-xdist (pip, $(command -v python3))"
    else
        apt_install python3-pytest-xdist
        say "installed python3-pytest-xdist"
    fi
    python3 -c "import xdist" >/dev/null 2>&1 || die "pytest-xdist is still not importable by $(command -v python3)"
fi

# mutagen, the oracle for the ID3 frames ffprobe does not print (Tests/oracle/test_audio_streams.py).
if ! python3 -c "import mutagen" >/dev/null 2>&1; then
    if python3 -m pip --version >/dev/null 2>&1 \
            && python3 -m pip install --quiet mutagen >"$LOG" 2>&1; then
        say "installed mutagen (pip, $(command -v python3))"
    else
        apt_install python3-mutagen
        say "installed python3-mutagen"
    fi
    python3 -c "import mutagen" >/dev/null 2>&1 || die "mutagen is still not importable by $(command -v python3)"
fi

# pip_install SPEC: a package Debian does not have (or has too old) from PyPI, with pip; where
# Debian's python3 refuses pip installs (PEP 668, "externally-managed-environment"), pip again
# with --break-system-packages (it goes under /usr/local, not over Debian's own files).
pip_install() {
    if ! python3 -m pip --version >/dev/null 2>&1; then
        apt_install python3-pip
        say "installed python3-pip"
    fi
    if python3 -m pip install --quiet "$1" >"$LOG" 2>&1; then
        say "installed $1 (pip, $(command -v python3))"
    elif grep -q externally-managed "$LOG" \
            && python3 -m pip install --quiet --break-system-packages "$1" >"$LOG" 2>&1; then
        say "installed $1 (pip --break-system-packages, $(command -v python3))"
    else
        cat "$LOG" >&2
        die "pip install '$1' failed"
    fi
}

# mypy, which `make test` runs --strict over the Python package, its tests and samples
# (Bindings/python/pyproject.toml). From PyPI: Debian 12's python3-mypy (1.0) predates the
# typing of numpy and Ray the checks rely on.
if ! python3 -c "import sys; from mypy.version import __version__ as v; sys.exit(tuple(map(int, v.split('+')[0].split('.')[:2])) < (1, 10))" \
        >/dev/null 2>&1; then
    pip_install 'mypy>=1.10'
    python3 -m mypy --version >/dev/null 2>&1 || die "mypy is still not runnable by $(command -v python3)"
fi

# aifc, the oracle for AIFF markers (MARK chunks, which FFmpeg does not read;
# Tests/oracle/test_metadata_api.py, Bindings/python/tests/test_metadata.py): Python's own module
# up to 3.12; PEP 594 removed it from 3.13, where PyPI's standard-aifc gives the same module.
if ! python3 -W ignore -c "import aifc" >/dev/null 2>&1; then
    pip_install standard-aifc
    python3 -W ignore -c "import aifc" >/dev/null 2>&1 || die "aifc is still not importable by $(command -v python3)"
fi

# Ray Data, for mediakit.ray and its tests (Bindings/python/tests/test_ray.py) and
# scripts/bench_ray.sh. Debian has no package of it. About 500 MB installed (ray, pyarrow,
# pandas), ~1 min.
if ! python3 -c "import ray.data" >/dev/null 2>&1; then
    pip_install 'ray[data]'
    python3 -c "import ray.data" >/dev/null 2>&1 || die "ray is still not importable by $(command -v python3)"
fi

# pytest-timeout: `make test` gives each test of the oracle suite and the Python bindings a time
# limit, so that a hang (a deadlock in a binding, a decoder that never returns) fails that test,
# named with the stacks of every thread, instead of holding CI for its 90 minutes.
if ! python3 -c "import pytest_timeout" >/dev/null 2>&1; then
    pip_install pytest-timeout
    python3 -c "import pytest_timeout" >/dev/null 2>&1 || die "pytest-timeout is still not importable by $(command -v python3)"
fi

for tool in ffmpeg ffprobe ffplay pkg-config /usr/bin/time; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is missing after install"
done
pkg-config --exists libavcodec libavformat libavutil libswscale || die "pkg-config cannot find libavcodec/libavformat/libavutil/libswscale"
