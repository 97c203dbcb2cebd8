#!/usr/bin/env python3
"""Times one sparse batch for BENCHMARKS.md (run under farm-bench): N uniformly spaced frames of a
file as one rgb24 array, by mediakit.VideoDecoder.get_frames_at (each GOP decoded once), or with
--loop by the older way, DecodeSession.frame_at + Frame.to_numpy("rgb24") per frame (each seek decoding
from its key frame again).

    python3 scripts/bench_frames_at.py FILE [N] [--loop]
"""
import sys

import mediakit


def main() -> None:
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 10
    with mediakit.VideoDecoder(path) as dec:
        total = len(dec)
        indices = [i * total // n for i in range(n)]
        if "--loop" not in sys.argv:
            batch = dec.get_frames_at(indices)
            print(batch.data.shape, file=sys.stderr)
            return
        times = [float(dec._seconds[i]) for i in indices]   # presentation seconds of those frames
    with mediakit.open(path) as demuxer:
        track = next(t for t in demuxer.tracks if t.media_type == "video")
        decoder = mediakit.DecodeSession(track)
        for t in times:
            frame = decoder.frame_at(t)
            assert frame is not None
            frame.to_numpy("rgb24")


if __name__ == "__main__":
    main()
