"""Copy the tracks of a media file into a new one, compressed as they are (no decoding): MP4,
Matroska / WebM or Ogg, as the output's extension says. Prints the progress on stderr.

    python3 Samples/python/remux.py in.mp4 out.mp4 [--tracks 0,2] [--faststart | --fragment SECONDS]
"""
import argparse
import sys

import mediakit


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--tracks", help="the source tracks to copy, in this order (e.g. 1,0); default: every track")
    layout = ap.add_mutually_exclusive_group()
    layout.add_argument("--faststart", action="store_true", help="MP4: the moov at the front")
    layout.add_argument("--fragment", type=float, metavar="SECONDS", help="MP4: fragmented, a fragment every SECONDS")
    args = ap.parse_args()

    tracks = [int(t) for t in args.tracks.split(",")] if args.tracks else None
    shown = -1

    def progress(fraction: float, done: int, total: int) -> None:
        nonlocal shown
        percent = int(fraction * 100)
        if percent // 10 != shown // 10 or done == total:    # every 10 % and at the end
            print(f"\r{percent:3d} % ({done}/{total} packets)", end="" if done < total else "\n",
                  file=sys.stderr, flush=True)
            shown = percent

    try:
        mediakit.remux(args.input, args.output, faststart=args.faststart, fragment=args.fragment, tracks=tracks,
                       progress=progress)
    except mediakit.MediaKitError as e:
        sys.exit(f"remux: {e}")
    with mediakit.open(args.output) as out:
        print(f"{args.output}: " + ", ".join(f"{t.media_type} {t.codec}" for t in out.tracks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
