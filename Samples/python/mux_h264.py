"""Mux a raw H.264 stream (Annex B, as encoders, cameras and RTP depacketisers give it) into an
MP4 with mediakit.Muxer. The packets come from this script's own parser, not from a MediaKit
demuxer: the track is described by CodecParameters and every packet is the caller's bytes.

    python3 Samples/python/mux_h264.py in.h264 out.mp4 [--fps 25] [--timescale 90000]

A raw stream carries no timestamps. Decoding order is the stream's order; the presentation
order comes from each picture's order count (POC, from the slice headers), so streams with
B-frames get the right presentation and decoding times: pts counts the frames in presentation
order, dts the frames in decoding order, shifted back by the reordering depth. The parameter
sets (SPS, PPS) go into the avcC record (the MP4 sample entry 'avc1'), the other NAL units of
each access unit into its sample, each after a 4-byte length.

Supported: progressive (frame) streams with picture order count types 0 and 2, which is what
x264, OpenH264 and hardware encoders write; interlaced (field) coding is refused with a message.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterator, Optional

import mediakit

# NAL unit types (ITU-T H.264 table 7-1).
NAL_SLICE, NAL_IDR, NAL_SEI, NAL_SPS, NAL_PPS, NAL_AUD = 1, 5, 6, 7, 8, 9


def nal_units(stream: bytes) -> Iterator[bytes]:
    """The NAL units of an Annex B byte stream, without their start codes (00 00 01 or
    00 00 00 01) and without the zero bytes that pad the end of a NAL unit."""
    starts = []
    i = stream.find(b"\x00\x00\x01")
    while i >= 0:
        starts.append(i + 3)
        i = stream.find(b"\x00\x00\x01", i + 3)
    for n, begin in enumerate(starts):
        end = starts[n + 1] - 3 if n + 1 < len(starts) else len(stream)
        nal = stream[begin:end].rstrip(b"\x00")
        if nal:
            yield nal


def rbsp(nal: bytes) -> bytes:
    """The payload of a NAL unit with its emulation prevention bytes (00 00 03) removed."""
    out = bytearray()
    zeros = 0
    for b in nal[1:]:
        if zeros >= 2 and b == 3:
            zeros = 0
            continue
        out.append(b)
        zeros = zeros + 1 if b == 0 else 0
    return bytes(out)


class BitReader:
    """Reads the fixed-length and Exp-Golomb fields of an RBSP, most significant bit first."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def u(self, n: int) -> int:
        value = 0
        for _ in range(n):
            if self.pos >= 8 * len(self.data):
                raise ValueError(f"the NAL unit ends at bit {self.pos} inside a field")
            value = (value << 1) | ((self.data[self.pos >> 3] >> (7 - (self.pos & 7))) & 1)
            self.pos += 1
        return value

    def ue(self) -> int:
        zeros = 0
        while self.u(1) == 0:
            zeros += 1
            if zeros > 31:
                raise ValueError(f"an Exp-Golomb code at bit {self.pos} is longer than 32 bits")
        return (1 << zeros) - 1 + self.u(zeros)

    def se(self) -> int:
        k = self.ue()
        return (k + 1) // 2 if k & 1 else -(k // 2)


@dataclass
class SPS:
    """The fields of a sequence parameter set this muxer needs."""
    raw: bytes
    profile_idc: int
    chroma_format_idc: int
    bit_depth_luma: int
    bit_depth_chroma: int
    log2_max_frame_num: int
    poc_type: int
    log2_max_poc_lsb: int
    frame_mbs_only: bool
    separate_colour_plane: bool
    width: int
    height: int


def _skip_scaling_list(r: BitReader, size: int) -> None:
    last = next_ = 8
    for _ in range(size):
        if next_ != 0:
            next_ = (last + r.se() + 256) % 256
        last = next_ if next_ != 0 else last


def parse_sps(nal: bytes) -> tuple[int, SPS]:
    """(seq_parameter_set_id, SPS) of an SPS NAL unit (H.264 7.3.2.1.1)."""
    r = BitReader(rbsp(nal))
    profile_idc = r.u(8)
    r.u(16)                                    # constraint flags, level_idc
    sps_id = r.ue()
    chroma_format_idc, separate, depth_luma, depth_chroma = 1, False, 8, 8
    if profile_idc in (100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135):
        chroma_format_idc = r.ue()
        if chroma_format_idc == 3:
            separate = bool(r.u(1))
        depth_luma, depth_chroma = r.ue() + 8, r.ue() + 8
        r.u(1)                                 # qpprime_y_zero_transform_bypass_flag
        if r.u(1):                             # seq_scaling_matrix_present_flag
            for i in range(8 if chroma_format_idc != 3 else 12):
                if r.u(1):
                    _skip_scaling_list(r, 16 if i < 6 else 64)
    log2_max_frame_num = r.ue() + 4
    poc_type = r.ue()
    log2_max_poc_lsb = 0
    if poc_type == 0:
        log2_max_poc_lsb = r.ue() + 4
    elif poc_type == 1:
        raise ValueError("picture order count type 1 is not supported by this sample")
    r.ue()                                     # max_num_ref_frames
    r.u(1)                                     # gaps_in_frame_num_value_allowed_flag
    width_mbs, height_map_units = r.ue() + 1, r.ue() + 1
    frame_mbs_only = bool(r.u(1))
    if not frame_mbs_only:
        r.u(1)                                 # mb_adaptive_frame_field_flag
    r.u(1)                                     # direct_8x8_inference_flag
    width, height = width_mbs * 16, height_map_units * 16 * (2 - int(frame_mbs_only))
    if r.u(1):                                 # frame_cropping_flag
        left, right, top, bottom = r.ue(), r.ue(), r.ue(), r.ue()
        sub_w = 2 if chroma_format_idc in (1, 2) else 1
        sub_h = 2 if chroma_format_idc == 1 else 1
        crop_x = sub_w if chroma_format_idc and not separate else 1
        crop_y = (sub_h if chroma_format_idc and not separate else 1) * (2 - int(frame_mbs_only))
        width -= crop_x * (left + right)
        height -= crop_y * (top + bottom)
    return sps_id, SPS(nal, profile_idc, chroma_format_idc, depth_luma, depth_chroma, log2_max_frame_num,
                       poc_type, log2_max_poc_lsb, frame_mbs_only, separate, width, height)


@dataclass
class PPS:
    """The fields of a picture parameter set this muxer needs."""
    raw: bytes
    sps_id: int
    bottom_field_pic_order_in_frame_present: bool


def parse_pps(nal: bytes) -> tuple[int, PPS]:
    """(pic_parameter_set_id, PPS) of a PPS NAL unit (H.264 7.3.2.2)."""
    r = BitReader(rbsp(nal))
    pps_id, sps_id = r.ue(), r.ue()
    r.u(1)                                     # entropy_coding_mode_flag
    return pps_id, PPS(nal, sps_id, bool(r.u(1)))


@dataclass
class AccessUnit:
    """One coded picture: its NAL units (parameter sets left out), whether it is an IDR picture,
    and its picture order count."""
    nals: list[bytes] = field(default_factory=list)
    idr: bool = False
    poc: int = 0

    def sample(self) -> bytes:
        """The MP4 sample: each NAL unit after its length in 4 bytes (avcC lengthSizeMinusOne = 3)."""
        return b"".join(len(n).to_bytes(4, "big") + n for n in self.nals)


class Parser:
    """Splits an Annex B stream into access units and computes their picture order counts
    (H.264 8.2.1), keeping the parameter sets for the avcC."""

    def __init__(self) -> None:
        self.sps: dict[int, SPS] = {}
        self.pps: dict[int, PPS] = {}
        self.units: list[AccessUnit] = []
        self._current: Optional[AccessUnit] = None
        self._has_slice = False
        self._prev_msb = self._prev_lsb = 0
        self._frame_num_offset = self._prev_frame_num = 0

    def _new_unit(self) -> AccessUnit:
        self._current = AccessUnit()
        self._has_slice = False
        self.units.append(self._current)
        return self._current

    def push(self, nal: bytes) -> None:
        kind = nal[0] & 0x1F
        # A NAL unit that can only come before a picture's first slice starts the next access unit (7.4.1.2.3).
        if self._current is None or (self._has_slice and (kind in (NAL_AUD, NAL_SEI, NAL_SPS, NAL_PPS)
                                                           or 14 <= kind <= 18)):
            self._new_unit()
        unit = self._current
        assert unit is not None
        if kind == NAL_SPS:
            sps_id, sps = parse_sps(nal)
            self.sps[sps_id] = sps
            return
        if kind == NAL_PPS:
            pps_id, pps = parse_pps(nal)
            self.pps[pps_id] = pps
            return
        if kind in (NAL_SLICE, NAL_IDR):
            r = BitReader(rbsp(nal))
            first_mb = r.ue()
            if first_mb == 0 and self._has_slice:   # the first slice of the next picture
                unit = self._new_unit()
            r.ue()                                   # slice_type
            found = self.pps.get(r.ue())
            if found is None or found.sps_id not in self.sps:
                raise ValueError(f"a slice in access unit {len(self.units) - 1} names a parameter set "
                                 "that the stream did not give before it")
            pps = found
            sps = self.sps[pps.sps_id]
            if sps.separate_colour_plane:
                r.u(2)
            frame_num = r.u(sps.log2_max_frame_num)
            if not sps.frame_mbs_only and r.u(1):
                raise ValueError(f"access unit {len(self.units) - 1} is a field: interlaced coding is not supported")
            if first_mb == 0 or not self._has_slice:
                if kind == NAL_IDR:
                    r.ue()                           # idr_pic_id
                unit.idr = kind == NAL_IDR
                unit.poc = self._poc(r, sps, pps, frame_num, unit.idr, nal_ref_idc=(nal[0] >> 5) & 3)
            self._has_slice = True
        unit.nals.append(nal)

    def _poc(self, r: BitReader, sps: SPS, pps: PPS, frame_num: int, idr: bool, nal_ref_idc: int) -> int:
        if sps.poc_type == 2:                        # output order is decoding order (8.2.1.3)
            if idr:
                self._frame_num_offset = 0
            elif self._prev_frame_num > frame_num:
                self._frame_num_offset += 1 << sps.log2_max_frame_num
            self._prev_frame_num = frame_num
            absolute = self._frame_num_offset + frame_num
            return 0 if idr else 2 * absolute - (nal_ref_idc == 0)
        lsb = r.u(sps.log2_max_poc_lsb)              # type 0 (8.2.1.1)
        if pps.bottom_field_pic_order_in_frame_present:
            r.se()                                   # delta_pic_order_cnt_bottom
        if idr:
            self._prev_msb = self._prev_lsb = 0
        max_lsb = 1 << sps.log2_max_poc_lsb
        if lsb < self._prev_lsb and self._prev_lsb - lsb >= max_lsb // 2:
            msb = self._prev_msb + max_lsb
        elif lsb > self._prev_lsb and lsb - self._prev_lsb > max_lsb // 2:
            msb = self._prev_msb - max_lsb
        else:
            msb = self._prev_msb
        if nal_ref_idc:                              # reference pictures carry the count on
            self._prev_msb, self._prev_lsb = msb, lsb
        return msb + lsb

    def avcc(self) -> bytes:
        """The AVCDecoderConfigurationRecord (ISO/IEC 14496-15 5.3.3.1) of the stream's parameter sets."""
        if not self.sps or not self.pps:
            raise ValueError("the stream has no SPS or no PPS: it cannot be described in an avcC")
        sps_list, pps_list = list(self.sps.values()), [p.raw for p in self.pps.values()]
        first = sps_list[0]
        out = bytearray([1, first.raw[1], first.raw[2], first.raw[3], 0xFF, 0xE0 | len(sps_list)])
        for s in sps_list:
            out += len(s.raw).to_bytes(2, "big") + s.raw
        out.append(len(pps_list))
        for p in pps_list:
            out += len(p).to_bytes(2, "big") + p
        if first.profile_idc not in (66, 77, 88):    # the High profiles' extension
            out += bytes([0xFC | first.chroma_format_idc, 0xF8 | (first.bit_depth_luma - 8),
                          0xF8 | (first.bit_depth_chroma - 8), 0])
        return bytes(out)


@dataclass
class Timed:
    """An access unit with its MP4 timestamps, in decoding order."""
    unit: AccessUnit
    pts: int
    dts: int
    duration: int


def timestamps(units: list[AccessUnit], frame_ticks: int) -> tuple[list[Timed], int]:
    """Presentation and decoding times of `units` (in decoding order), `frame_ticks` per frame,
    and the reordering depth. Each IDR picture starts a new order count: within a run from one IDR
    to the next, pictures are presented in POC order."""
    order: list[int] = [0] * len(units)
    start = 0
    while start < len(units):
        end = start + 1
        while end < len(units) and not units[end].idr:
            end += 1
        ranked = sorted(range(start, end), key=lambda i: units[i].poc)
        for rank, i in enumerate(ranked):
            order[i] = start + rank
        start = end
    depth = max((i - order[i] for i in range(len(units))), default=0)
    return [Timed(u, order[i] * frame_ticks, (i - depth) * frame_ticks, frame_ticks) for i, u in enumerate(units)], depth


def parse(stream: bytes) -> Parser:
    """Parses a whole Annex B stream."""
    parser = Parser()
    for nal in nal_units(stream):
        parser.push(nal)
    parser.units = [u for u in parser.units if u.nals]
    if not parser.units:
        raise ValueError("the stream holds no coded picture")
    if not parser.units[0].idr:
        raise ValueError("the stream does not start with an IDR picture")
    return parser


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("input", help="a raw H.264 stream (Annex B)")
    ap.add_argument("output", help="the MP4 file to write")
    ap.add_argument("--fps", default="25", help="frames per second, e.g. 25 or 30000/1001 (default 25)")
    ap.add_argument("--timescale", type=int, default=90000, help="MP4 ticks per second (default 90000)")
    args = ap.parse_args()

    fps = Fraction(args.fps)
    ticks = Fraction(args.timescale) / fps
    if fps <= 0 or ticks.denominator != 1:
        sys.exit(f"mux_h264: {args.timescale} ticks per second do not divide into frames of 1/{fps} s")
    with open(args.input, "rb") as f:
        try:
            parser = parse(f.read())
        except ValueError as e:
            sys.exit(f"mux_h264: {args.input}: {e}")
    timed, depth = timestamps(parser.units, int(ticks))
    sps = next(iter(parser.sps.values()))
    params = mediakit.CodecParameters("h264", "video", extradata=parser.avcc(), width=sps.width, height=sps.height,
                                      time_base=Fraction(1, args.timescale), reorder_depth=depth)
    try:
        with mediakit.Muxer(args.output) as mux:
            track = mux.add_track(params)
            for t in timed:
                mux.write(track, t.unit.sample(), pts=t.pts, dts=t.dts, duration=t.duration, is_keyframe=t.unit.idr)
    except mediakit.MediaKitError as e:
        sys.exit(f"mux_h264: {e}")
    print(f"{args.output}: {len(timed)} frames, {sps.width}x{sps.height}, {fps} fps, reorder depth {depth}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
