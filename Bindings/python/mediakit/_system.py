"""The system libraries an installed wheel's plugins need (FFmpeg, dav1d, Opus, Vorbis).

The wheel (`make wheel`) bundles libmediakit, its plugins and the Swift runtime, but takes the
codec libraries from the system: `_lib/_system_libs.txt` lists, per plugin, each library it
links and the Debian package that ships it, as the build machine resolved them. Importing works
without them (the native demuxers and muxers and the Swift plugin need none); a plugin whose
library is missing cannot load, and this module names the package to install.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

_LIST = Path(__file__).resolve().parent / "_lib" / "_system_libs.txt"


def missing_system_libraries() -> list[str]:
    """One message per system library a bundled plugin needs and this machine lacks, naming
    the plugin, the library and the Debian package to install (``apt-get install ...``); empty
    when every one loads, or when this package bundles no plugins (a checkout's install)."""
    if not _LIST.is_file():
        return []
    out = []
    for line in _LIST.read_text().splitlines():
        parts = line.split()
        if len(parts) != 3 or line.startswith("#"):
            continue
        plugin, soname, package = parts
        try:
            ctypes.CDLL(soname)
        except OSError:
            out.append(f"the plugin {plugin} cannot load: {soname} is missing; "
                       f"install the Debian package {package} (apt-get install {package})")
    return out
