"""make_mkdemo.py OUT.mkdemo OUT.pcm: writes an MKDEMO file (docs/writing-a-plugin.md, "A
container plugin") holding 2.5 s of a stereo 48 kHz pcm_s16le tone in packets of 1024 sample
frames (the last one shorter) and a text track of three cues between them, and the same PCM
as raw s16le in OUT.pcm: what a demuxer and a decoder must give back."""
import math
import struct
import sys

RATE, CHANNELS, FRAMES, SAMPLES = 48000, 2, 1024, 120000
CUES = [(0, 900, "Hello"), (1000, 700, "from MKDEMO"), (2000, 500, "third cue: \u00e9t\u00e9")]  # ms


def packet(track: int, pts: int, duration: int, data: bytes) -> bytes:
    """u32 size, u16 track, u16 flags (1: key), i64 pts, u32 duration, then the bytes."""
    return struct.pack("<IHHqI", len(data), track, 1, pts, duration) + data


def main(out: str, pcm_out: str) -> None:
    pcm = b"".join(struct.pack("<hh", round(12000 * math.sin(2 * math.pi * 440 * i / RATE)),
                               round(8000 * math.sin(2 * math.pi * 660 * i / RATE))) for i in range(SAMPLES))
    with open(out, "wb") as f:
        f.write(b"MKDEMO1\n" + struct.pack("<I", 2))
        f.write(struct.pack("<BBHI", ord("A"), CHANNELS, 0, RATE))   # track 0: audio
        f.write(struct.pack("<BBHI", ord("T"), 0, 0, 1000))          # track 1: text, in ms
        cues = list(CUES)
        for start in range(0, SAMPLES, FRAMES):
            while cues and cues[0][0] * RATE <= start * 1000:        # cues in time order with the audio
                ms, duration, text = cues.pop(0)
                f.write(packet(1, ms, duration, text.encode()))
            count = min(FRAMES, SAMPLES - start)
            f.write(packet(0, start, count, pcm[start * 4:(start + count) * 4]))
    with open(pcm_out, "wb") as f:
        f.write(pcm)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
