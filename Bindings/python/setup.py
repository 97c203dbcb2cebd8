"""Copies the built libmediakit.so and codec plugins into the package at build time,
so an installed `mediakit` works without the checkout. The library comes from
$MEDIAKIT_BUILD_DIR, else the checkout's .build/release (then .build/debug): run
`make build` first. Without a built library the package still installs and finds
one at import through MEDIAKIT_LIBRARY or the checkout recorded here."""

import os
import re
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

CHECKOUT = Path(__file__).resolve().parents[2]


def version():
    """MediaKit's one version: MediaKitVersion.string in Sources/MediaKit/Core/Version.swift."""
    source = CHECKOUT / "Sources" / "MediaKit" / "Core" / "Version.swift"
    m = re.search(r'public static let string = "([0-9][0-9.]*)"', source.read_text())
    if m is None:
        raise SystemExit(f"mediakit: no version string in {source}")
    return m.group(1)


def built_library_dir():
    env = os.environ.get("MEDIAKIT_BUILD_DIR")
    candidates = [Path(env)] if env else []
    candidates += [CHECKOUT / ".build" / "release", CHECKOUT / ".build" / "debug"]
    for c in candidates:
        if (c / "libmediakit.so").is_file():
            return c
    return None


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        package = Path(self.build_lib) / "mediakit"
        (package / "_build_info.py").write_text(f"CHECKOUT = {str(CHECKOUT)!r}\n")
        source = built_library_dir()
        if source is None:
            print("mediakit: no built libmediakit.so found (run `make build`); "
                  "the package will look for it at import time")
            return
        target = package / "_lib"
        target.mkdir(exist_ok=True)
        for so in [source / "libmediakit.so", *sorted(source.glob("libMediaKitPlugin*.so"))]:
            shutil.copy2(so, target / so.name)
            print(f"mediakit: bundled {so}")


setup(version=version(), cmdclass={"build_py": BuildWithLibrary})
