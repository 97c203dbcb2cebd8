#!/usr/bin/env python3
"""Writes the first audio or video stream of a file as a packet file for plugin_harness.c.

Oracle-free helper: packets and extradata as ffprobe reads them (-show_data), and the stream's
codec configuration, in the layout (all little-endian)

    "MKP2", u32 config size (bytes that follow, 32 today), then i32 each: sample rate, channels,
    block align, bits per coded sample, time base numerator, time base denominator, width, height;
    u32 extradata size, extradata; then per packet u32 size, i64 pts, payload.

ffprobe does not print a stream's block align: for a WAV file it is read from the fmt chunk
(nBlockAlign), otherwise it is 0 (unknown). Usage: make_packets.py IN a|v OUT
"""
import json
import struct
import subprocess
import sys


def unhex(dump: str) -> bytes:
    out = bytearray()
    for line in dump.splitlines():
        if ": " not in line:
            continue
        hexpart = line.split(": ", 1)[1].split("  ", 1)[0]
        out += bytes.fromhex(hexpart.replace(" ", ""))
    return bytes(out)


def wav_block_align(path: str) -> int:
    """nBlockAlign of a RIFF/RF64 WAVE file's fmt chunk; 0 for another file."""
    with open(path, "rb") as f:
        head = f.read(12)
        if len(head) < 12 or head[:4] not in (b"RIFF", b"RF64") or head[8:12] != b"WAVE":
            return 0
        while True:
            chunk = f.read(8)
            if len(chunk) < 8:
                return 0
            cid, size = chunk[:4], struct.unpack("<I", chunk[4:])[0]
            if cid == b"fmt ":
                body = f.read(size)
                return struct.unpack("<H", body[12:14])[0] if len(body) >= 14 else 0
            f.seek(size + (size & 1), 1)


def number(value, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def main() -> None:
    src, kind, dst = sys.argv[1], sys.argv[2], sys.argv[3]
    sel = ["-select_streams", f"{kind}:0"]
    streams = json.loads(subprocess.check_output(
        ["ffprobe", "-v", "error", *sel, "-show_streams", "-show_data", "-of", "json", src]))
    packets = json.loads(subprocess.check_output(
        ["ffprobe", "-v", "error", "-ignore_editlist", "1", *sel, "-show_packets", "-show_data",
         "-of", "json", src]))
    s = streams["streams"][0]
    extra = unhex(s.get("extradata", ""))
    tb_num, tb_den = (number(x) for x in s.get("time_base", "0/0").split("/"))
    config = struct.pack("<8i", number(s.get("sample_rate")), number(s.get("channels")), wav_block_align(src),
                         number(s.get("bits_per_sample")), tb_num, tb_den, number(s.get("width")),
                         number(s.get("height")))
    with open(dst, "wb") as f:
        f.write(b"MKP2" + struct.pack("<I", len(config)) + config)
        f.write(struct.pack("<I", len(extra)) + extra)
        for p in packets["packets"]:
            data = unhex(p.get("data", ""))
            pts = int(p["pts"]) if p.get("pts", "N/A") != "N/A" else -(1 << 63)
            f.write(struct.pack("<Iq", len(data), pts) + data)


if __name__ == "__main__":
    main()
