"""`python -m mediakit probe|decode|remux|transcode|audioconv|stream|tag ARGS...` and the `mk-*`
console scripts of the wheel: each runs the bundled tool of that name (mediakit/_lib/mk-*)
with the arguments given, in place of this process (same output, same exit status)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable, NoReturn

from ._system import missing_system_libraries

#: `python -m mediakit COMMAND`: the tool each command runs.
COMMANDS = {"probe": "mk-probe", "decode": "mk-decode", "remux": "mk-remux", "transcode": "mk-transcode",
            "audioconv": "mk-audioconv", "stream": "mk-stream", "tag": "mk-tag"}


def run_tool(name: str, args: list[str]) -> NoReturn:
    """Replaces this process with the bundled tool `name` (e.g. "mk-probe") given `args`;
    exits with status 2 and a message when this installation has no such tool."""
    tool = Path(__file__).resolve().parent / "_lib" / name
    if not os.access(tool, os.X_OK):
        sys.exit(f"mediakit: {name} is not in this installation ({tool}): the wheel from `make wheel` has the "
                 "tools; a `pip install ./Bindings/python` from a checkout has not (use the checkout's build)")
    for message in missing_system_libraries():
        print(f"mediakit: {message}", file=sys.stderr)
    sys.stderr.flush()
    os.execv(tool, [name, *args])


def main(argv: list[str]) -> NoReturn:
    """`python -m mediakit COMMAND ARGS...`."""
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python -m mediakit {{{'|'.join(COMMANDS)}}} ARGS...  (ARGS: the mk-* tool's, e.g. "
              "`python -m mediakit probe FILE`; `python -m mediakit probe --help`)", file=sys.stderr)
        sys.exit(2)
    run_tool(COMMANDS[argv[0]], argv[1:])


def _script(name: str) -> Callable[[], NoReturn]:
    """The console script that runs the bundled tool `name` with the command line's arguments."""
    def script() -> NoReturn:
        run_tool(name, sys.argv[1:])
    script.__doc__ = f"The `{name}` console script."
    return script


# The wheel's console scripts (entry_points.txt: `mk-probe = mediakit.__main__:mk_probe` ...).
mk_probe, mk_decode, mk_remux, mk_transcode, mk_audioconv, mk_stream, mk_tag = (
    _script(COMMANDS[c]) for c in ("probe", "decode", "remux", "transcode", "audioconv", "stream", "tag"))


if __name__ == "__main__":
    main(sys.argv[1:])
