"""mediakit.StreamParser's properties, running estimates and tags (issue 35, items 2 to 4), over
real files, against ffprobe / ffmpeg: the format, the packets' offsets, sizes and count, the
channel layout, the LAME priming FFmpeg skips (its start_time), the duration (the sum of
ffprobe's packet durations where FFmpeg only estimates one), the cover art's bytes (ffmpeg's
copy of the attached picture), HE-AAC found in an ADTS stream (ffprobe's profile and output
rate). Each file is probed once."""
import hashlib
import json
import subprocess
from fractions import Fraction
from pathlib import Path
from typing import Any, Optional

import pytest

import mediakit

pytestmark = pytest.mark.usefixtures("oracle_tools")

# ffprobe's channel_layout names -> WAVE channel-mask bits (FFmpeg's channel_layout.c).
LAYOUTS = {"mono": 0x4, "stereo": 0x3, "5.1(side)": 0x60F, "5.1": 0x3F, "5.0(side)": 0x607}


def _probe(path: Path) -> dict[str, Any]:
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_streams", "-show_packets", "-show_format",
                          "-of", "json", str(path)], capture_output=True, check=True).stdout
    parsed: dict[str, Any] = json.loads(out)
    return parsed


def _seconds(packets: list[dict[str, Any]], stream: dict[str, Any]) -> Fraction:
    """The sum of ffprobe's packet durations, exact (ticks of the stream's time base)."""
    return sum((int(x["duration"]) for x in packets if x.get("duration") not in (None, "N/A")), 0) * Fraction(stream["time_base"])


def _feed(parser: mediakit.StreamParser, data: bytes, chunk: int) -> list[mediakit.StreamEvent]:
    events = []
    for i in range(0, len(data), chunk):
        events += parser.push(data[i:i + chunk])
    return events + parser.finish()


@pytest.mark.parametrize("name", ["mp3_mpeg1_44k_stereo_vbr_xing_9s.mp3", "mp3_cbr_56k_mono_no_xing.mp3",
                                  "aac_adts_lc_22k_id3_priv_timestamp_hls_packed.aac", "breadth/ac3_shaka-proj_2318c7_fileSequence0.ac3"])
def test_properties_like_ffprobe(name: str, shared_media: Path) -> None:
    """None before the bytes; the format after the first frames; after finish() the counts,
    sizes, offsets and duration of ffprobe's packets, exact."""
    path = shared_media / name
    data = path.read_bytes()
    ref = _probe(path)
    st, packets = ref["streams"][0], ref["packets"]
    with mediakit.StreamParser(total_bytes=len(data)) as p:
        assert (p.data_format, p.bit_rate, p.duration, p.data_offset, p.file_format, p.magic_cookie) == (None,) * 6
        assert p.format_list == [] and len(p.metadata) == 0 and p.packet_table_info is None
        with pytest.raises(mediakit.MediaError):
            p.packet_to_frame(1)
        p.push(data[:8192])
        f = p.data_format
        assert f is not None and (f.codec, f.sample_rate, f.channels) == (st["codec_name"], int(st["sample_rate"]), st["channels"])
        assert p.data_offset == int(packets[0]["pos"])
        assert p.bit_rate is not None and p.duration is not None and p.duration_estimated == (not name.endswith("xing_9s.mp3"))
        assert p.channel_mask == LAYOUTS[st["channel_layout"]]
        # Only the first 8 KiB parsed: the counts are estimates from the stream's length.
        assert p.audio_data_packet_count is not None
        assert p.audio_data_packet_count_estimated == (not name.endswith("xing_9s.mp3"))
        rest = data[8192:]
        for i in range(0, len(rest), 5000):
            p.push(rest[i:i + 5000])
        p.finish()
        sizes = [int(x["size"]) for x in packets]
        assert (p.audio_data_packet_count, p.audio_data_packet_count_estimated) == (len(packets), False)
        assert (p.audio_data_byte_count, p.audio_data_byte_count_estimated) == (sum(sizes), False)
        assert p.maximum_packet_size == max(sizes)
        assert p.packet_size_upper_bound is not None and p.packet_size_upper_bound >= max(sizes)
        assert p.average_bytes_per_packet == pytest.approx(sum(sizes) / len(sizes))
        assert p.duration == pytest.approx(float(_seconds(packets, st)), abs=1e-9) and not p.duration_estimated
        for i, x in enumerate(packets):
            assert p.packet_to_byte(i) == (int(x["pos"]), False)
            assert p.byte_to_packet(int(x["pos"]) + 1) == (i, 1, False)
        fpp = f.frames_per_packet
        assert p.packet_to_frame(7) == 7 * fpp and p.frame_to_packet(7 * fpp + 3) == (7, 3)
        start = float(st["start_time"]) if st.get("start_time") not in (None, "N/A") else 0.0
        if start > 0:   # a LAME tag: FFmpeg skips the priming samples
            info = p.packet_table_info
            assert info is not None and info.priming_frames == round(start * f.sample_rate)
        if "cbr" in name:
            assert p.bit_rate == int(st["bit_rate"]) and p.bit_rate_exact


def test_running_estimates_refine_and_a_seek_is_a_discontinuity(shared_media: Path) -> None:
    """A VBR MP3 without a Xing / VBRI header: the first duration (from the first frame's bit
    rate) is far off; the estimates refined as packets arrive end within 5% of the true one
    (ffprobe's packets' durations), and after finish() it is exact. A seek to an estimated
    offset gives a discontinuity event, not a warning."""
    path = shared_media / "mp3_vbr_no_xing_no_vbri.mp3"
    data = path.read_bytes()
    ref = _probe(path)
    true = float(_seconds(ref["packets"], ref["streams"][0]))
    with mediakit.StreamParser(total_bytes=len(data)) as p:
        events = _feed(p, data, 999)
        durations = [(e.seconds, e.estimated) for e in events if e.kind == "duration"]
        estimates = [d for d, estimated in durations if estimated]
        assert abs(estimates[0] - true) / true > 0.5          # 9.5 s said for 2.8 s
        assert abs(estimates[-1] - true) / true < 0.05 and len(estimates) > 3
        assert durations[-1][0] == pytest.approx(true, abs=1e-6) and not durations[-1][1]
        assert len([e for e in events if e.kind == "bit_rate"]) > 3
    with mediakit.StreamParser(total_bytes=len(data)) as p:
        p.push(data[:4000])
        offset, _, exact = p.seek(2.0)
        assert not exact
        after = p.push(data[offset:], discontinuity=True)
        assert not [e for e in after if e.kind == "warning"]
        jumps = [e for e in after if e.kind == "discontinuity"]
        assert len(jumps) == 1 and jumps[0].offset == offset + jumps[0].value
        first = next(e for e in after if e.kind == "packet")
        assert first.offset == jumps[0].offset and data[first.offset] == 0xFF


def test_every_tag_and_the_cover(shared_media: Path, tmp_path: Path) -> None:
    """All the ID3v2 tags (not only the title), as the demuxer reads the same file and ffprobe
    names them; the cover's bytes are ffmpeg's copy of the attached picture."""
    path = shared_media / "mp3_id3v2_apic_1400px_48k.mp3"
    data = path.read_bytes()
    ref = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_format", "-show_streams", "-of", "json", str(path)],
                                    capture_output=True, check=True).stdout)
    with mediakit.StreamParser() as p:
        _feed(p, data, 1000)
        with mediakit.open(path) as d:
            assert p.metadata.raw == d.metadata.raw and len(p.metadata.raw) > 1
        tags = ref["format"].get("tags", {})
        assert tags and all(p.metadata.get(k) == v for k, v in tags.items() if k in ("title", "artist", "album", "genre"))
        pic = next(s for s in ref["streams"] if s["disposition"].get("attached_pic"))
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(path), "-map", f"0:{pic['index']}", "-c", "copy", "-f", "image2",
                        str(tmp_path / "cover.img")], check=True)
        assert [a.data for a in p.attachments] == [(tmp_path / "cover.img").read_bytes()]
        # The CHAP frames: ffprobe's chapters (times and titles), and the demuxer's.
        chapters = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_chapters", "-of", "json", str(path)],
                                             capture_output=True, check=True).stdout)["chapters"]
        assert len(chapters) > 1
        assert [(c.start_seconds, c.end_seconds) for c in p.chapters] == [(float(c["start_time"]), float(c["end_time"])) for c in chapters]
        # (FFmpeg titles a chapter without a TIT2 with its element id; MediaKit's model keeps
        # that under "element_id", as test_metadata.py's chapters do.)
        assert p.chapters[0].title == chapters[0]["tags"]["title"]
        with mediakit.open(path) as d:
            assert p.chapters == d.chapters


def test_he_aac_in_adts_is_found_by_decoding(shared_media: Path, tmp_path: Path) -> None:
    """An ADTS header says AAC LC at the core's rate; the first frame, decoded, shows SBR (and
    the PS FFmpeg assumes for a mono core): the format list's outer layer is ffprobe's profile,
    rate and channels, its inner one the header's."""
    adts = tmp_path / "he.aac"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(shared_media / "m4a_heaac_v1_sbr_explicit_sync_ext_8k_core_16k_out.m4a"),
                    "-c", "copy", "-f", "adts", str(adts)], check=True)
    st = _probe(adts)["streams"][0]
    with mediakit.StreamParser() as p:
        p.push(adts.read_bytes()[:4096])
        layers = p.format_list
        assert (layers[0].profile, layers[0].sample_rate, layers[0].channels) == (st["profile"], int(st["sample_rate"]), st["channels"])
        core = p.data_format
        assert core is not None and layers[-1] == core and core.profile == "LC" and core.sample_rate == int(st["sample_rate"]) // 2


@pytest.mark.parametrize("name,hint", [("breadth/wav_Borewit_480e1b_alaw.wav", "wav"), ("breadth/flac_tinytag_a3f1bf_flac1sMono.flac", "mp3"),
                                       ("ogg_vorbis_mono_metadata_block_picture.ogg", "ogg"), ("mp4_h264_aac_moov_at_start_ctts_8s.mp4", "m4a"),
                                       ("breadth/ts_Vanilagy_00bbd7_eac3.ts", None)])
def test_containers_give_ffprobes_packets(name: str, hint: Optional[str], shared_media: Path) -> None:
    """A container (with a file type hint, right or wrong: the bytes decide) pushed in chunks of
    1000 bytes gives ffprobe's packets of its first audio stream: each the same size, at the same
    offset, with the same bytes (ffprobe's MD5 of each packet's data), and mediakit.open()'s
    packets of that track; the format and the magic cookie are the pull demuxer's."""
    path = shared_media / name
    data = path.read_bytes()
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_data_hash", "MD5", "-show_entries",
                          "packet=pos,size,data_hash", "-of", "json", str(path)], capture_output=True, check=True).stdout
    want = json.loads(out)["packets"]
    with mediakit.StreamParser(file_type_hint=hint) as p:
        events = _feed(p, data, 1000)
        got = [e for e in events if e.kind == "packet"]
        assert [len(e.data) for e in got] == [int(x["size"]) for x in want]
        assert [e.offset for e in got] == [int(x["pos"]) for x in want]
        assert ["MD5:" + hashlib.md5(e.data).hexdigest() for e in got] == [x["data_hash"] for x in want]
        with mediakit.open(str(path)) as d:
            track = next(t for t in d.tracks if t.media_type == "audio")
            pulled = [pk.data for pk in d.packets(track)]
            assert [e.data for e in got] == pulled
            assert p.file_format == d.container and p.magic_cookie == track.extradata


@pytest.mark.parametrize("name", ["mkv_opus_mono_tiny.mkv", "ivf_vp9_320x180_1s.ivf"])
def test_other_containers_are_refused_at_once(name: str, shared_media: Path) -> None:
    """A container the parser does not read (Matroska, IVF) is refused with MK_EUNSUPPORTED
    within its first bytes, pushed one byte at a time, not at finish()."""
    head = (shared_media / name).read_bytes()[:400]
    with mediakit.StreamParser(file_type_hint="mka") as p:
        with pytest.raises(mediakit.MediaError) as e:
            for i in range(len(head)):
                p.push(head[i:i + 1])
        assert e.value.name == "MK_EUNSUPPORTED" and "does not read" in e.value.message
