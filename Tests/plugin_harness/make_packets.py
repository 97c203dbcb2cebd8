#!/usr/bin/env python3
"""Writes the first audio or video stream of a file as a packet file for plugin_harness.c.

Oracle-free helper: packets and extradata as ffprobe reads them (-show_data), in the
simple layout `MKPK`, u32 extradata size, extradata, then per packet u32 size, i64 pts,
payload (all little-endian). Usage: make_packets.py IN a|v OUT
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


def main() -> None:
    src, kind, dst = sys.argv[1], sys.argv[2], sys.argv[3]
    sel = ["-select_streams", f"{kind}:0"]
    streams = json.loads(subprocess.check_output(
        ["ffprobe", "-v", "error", *sel, "-show_streams", "-show_data", "-of", "json", src]))
    packets = json.loads(subprocess.check_output(
        ["ffprobe", "-v", "error", "-ignore_editlist", "1", *sel, "-show_packets", "-show_data",
         "-of", "json", src]))
    extra = unhex(streams["streams"][0].get("extradata", ""))
    with open(dst, "wb") as f:
        f.write(b"MKPK" + struct.pack("<I", len(extra)) + extra)
        for p in packets["packets"]:
            data = unhex(p.get("data", ""))
            pts = int(p["pts"]) if p.get("pts", "N/A") != "N/A" else -(1 << 63)
            f.write(struct.pack("<Iq", len(data), pts) + data)


if __name__ == "__main__":
    main()
