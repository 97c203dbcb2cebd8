"""Copy every track of a media file into a new one, compressed as it is (no decoding): MP4,
Matroska / WebM or Ogg, as the output's extension says.

    python3 Samples/python/remux.py in.mp4 out.mp4 [--faststart | --fragment SECONDS]
"""
import sys
from typing import Any

import mediakit

args = sys.argv[1:]
if len(args) not in (2, 3, 4):
    sys.exit(__doc__)
src, dst = args[0], args[1]
options: dict[str, Any] = {}
if "--faststart" in args:
    options["faststart"] = True
if "--fragment" in args:
    options["fragment"] = float(args[args.index("--fragment") + 1])
try:
    mediakit.remux(src, dst, **options)
except mediakit.MediaKitError as e:
    sys.exit(f"remux: {e}")
with mediakit.open(dst) as out:
    print(f"{dst}: " + ", ".join(f"{t.media_type} {t.codec}" for t in out.tracks))
