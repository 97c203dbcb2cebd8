"""mediakit.Demuxer.metadata / .chapters / .attachments and Track.metadata over real files,
against ffprobe and ffmpeg (the tags, the chapter times and titles, the cover's bytes); and
.markers against Python's own aifc module (FFmpeg does not read AIFF markers), .instrument
against libsndfile (nor AIFF INST chunks)."""
import importlib
import json
import os
import subprocess
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import mediakit
import sndfile_oracle   # Tests/oracle (conftest puts it on sys.path)


def _ffprobe(path: Path) -> dict[str, Any]:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_format", "-show_streams", "-show_chapters", "-of", "json", str(path)],
                         capture_output=True, check=True).stdout
    parsed: dict[str, Any] = json.loads(out)
    return parsed


def _cover(path: Path, index: int, out: Path) -> bytes:
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(path), "-map", f"0:{index}", "-c", "copy", "-f", "image2", str(out)],
                   check=True)
    return out.read_bytes()


def test_ogg_stream_tags_and_picture(shared_media: Path, tmp_path: Path) -> None:
    path = shared_media / "ogg_vorbis_mono_metadata_block_picture.ogg"
    ref = _ffprobe(path)
    with mediakit.open(path) as d:
        track = d.tracks[0].metadata
        assert dict(d.metadata) == ref["format"].get("tags", {})      # Ogg: the tags are the stream's
        want = ref["streams"][0]["tags"]                                # Vorbis field names as written
        assert [(t.native_key, t.value) for t in track.raw] == list(want.items())
        assert track["title"] == want["TITLE"] and track["ARTIST"] == want["ARTIST"]
        pictures = [s for s in ref["streams"] if s["disposition"].get("attached_pic")]
        assert [a.description for a in d.attachments] == [p["tags"].get("title", "") for p in pictures]
        assert d.attachments[0].data == _cover(path, pictures[0]["index"], tmp_path / "ref.img")
        assert d.attachments[0].picture_type is not None


def test_aiff_markers_as_aifc_reads_them(tmp_path: Path) -> None:
    """An AIFF whose MARK chunk Python's aifc module wrote (after the sound, as it writes it;
    names of odd and even length, one empty): Demuxer.markers gives what aifc's getmarkers()
    reads back, in order (id, position in frames, name). A file without one has none."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        aifc: Any = importlib.import_module("aifc")   # scripts/deps.sh installs standard-aifc on Python 3.13+
    path = tmp_path / "markers.aiff"
    w = aifc.open(str(path), "wb")
    w.setnchannels(2)
    w.setsampwidth(2)
    w.setframerate(44100)
    for marker in [(1, 0, b"start"), (2, 22050, b"loop end"), (5, 44099, b""), (3, 30000, b"x")]:
        w.setmark(*marker)
    w.writeframes(bytes(4 * 44100))
    w.close()
    want = aifc.open(str(path), "rb").getmarkers()
    assert len(want) == 4
    with mediakit.open(path) as d:
        assert [(m.id, m.frame, m.name.encode()) for m in d.markers] == want
        assert all(isinstance(m, mediakit.Marker) for m in d.markers)
    plain = tmp_path / "plain.aiff"
    w = aifc.open(str(plain), "wb")
    w.setnchannels(1)
    w.setsampwidth(2)
    w.setframerate(8000)
    w.writeframes(bytes(800))
    w.close()
    with mediakit.open(plain) as d:
        assert d.markers == []


def test_aiff_instrument_as_libsndfile_reads_it(tmp_path: Path) -> None:
    """An AIFF that aifc wrote with markers and an INST chunk by Audio IFF 1.3's table (sustain
    loop forward, release loop forward then backward): Demuxer.instrument gives libsndfile's
    notes, velocities, gain and loop frames (SFC_GET_INSTRUMENT), and the chunk's play modes
    and marker ids; mediakit.remux into AIFF keeps them; a file without the chunk gives None in both."""
    path = tmp_path / "instrument.aiff"
    sndfile_oracle.aiff_with_chunk(path, [(1, 0, b"start"), (2, 6000, b"loop end"), (7, 4000, b"")],
                                   sndfile_oracle.inst_chunk(64, -3, (10, 90), (20, 110), 12, (1, 1, 2), (2, 7, 2)), False)
    want = sndfile_oracle.instrument(path)
    assert want is not None
    with mediakit.open(path) as d:
        got = d.instrument
    assert isinstance(got, mediakit.Instrument) and isinstance(got.sustain_loop, mediakit.InstrumentLoop)
    assert (got.base_note, got.detune, got.low_note, got.high_note, got.low_velocity, got.high_velocity, got.gain) == (
        want["base_note"], want["detune"], want["low_note"], want["high_note"], want["low_velocity"], want["high_velocity"], want["gain"])
    loops = [got.sustain_loop, got.release_loop]
    assert [(l.begin_frame, l.end_frame) for l in loops] == want["loops"]
    assert [(l.play_mode, l.begin_marker, l.end_marker) for l in loops] == [(1, 1, 2), (2, 7, 2)]
    # mediakit.remux into AIFF keeps the chunks (ffmpeg's remux drops them).
    copied = tmp_path / "copied.aiff"
    mediakit.remux(path, copied)
    assert sndfile_oracle.instrument(copied) == want
    with mediakit.open(copied) as d:
        assert d.instrument == got
        assert [(m.id, m.frame, m.name) for m in d.markers] == [(1, 0, "start"), (2, 6000, "loop end"), (7, 4000, "")]
    plain = tmp_path / "plain.aiff"
    sndfile_oracle.aiff_with_chunk(plain, [], b"", True)
    assert sndfile_oracle.instrument(plain) is None
    with mediakit.open(plain) as d:
        assert d.instrument is None


def test_mp3_chapters_exact(shared_media: Path) -> None:
    path = shared_media / "mp3_id3v2_apic_1400px_48k.mp3"
    ref = _ffprobe(path)
    with mediakit.open(path) as d:
        got = [(Fraction(c.start) * c.time_base, Fraction(c.end) * c.time_base) for c in d.chapters]
        want = [(Fraction(c["start"]) * Fraction(c["time_base"]), Fraction(c["end"]) * Fraction(c["time_base"])) for c in ref["chapters"]]
        assert got == want
        assert d.chapters[0].title == ref["chapters"][0]["tags"]["title"]
        assert d.metadata["title"] == ref["format"]["tags"]["title"]
        assert d.metadata.values_for("TITLE") == [ref["format"]["tags"]["title"]]


def test_mp4_itunes_tags_covers_and_stream_tags(shared_media: Path, tmp_path: Path) -> None:
    path = shared_media / "m4a_aac_8k_covr_jpeg_bmp.m4a"
    ref = _ffprobe(path)
    with mediakit.open(path) as d:
        tags = ref["format"]["tags"]
        assert d.metadata["artist"] == tags["artist"] and d.metadata["composer"] == tags["composer"]
        assert d.metadata["encoder"] == tags["encoder"] and d.metadata["major_brand"] == tags["major_brand"]
        assert {t.native_key for t in d.metadata.raw} >= {"\u00a9ART", "\u00a9wrt", "\u00a9too"}
        stream = ref["streams"][0]["tags"]
        assert d.tracks[0].metadata["handler_name"] == stream["handler_name"]
        assert d.tracks[0].metadata["language"] == stream["language"]
        pictures = [s for s in ref["streams"] if s["disposition"].get("attached_pic")]
        assert len(d.attachments) == len(pictures) == 2
        for a, p in zip(d.attachments, pictures):
            assert a.data == _cover(path, p["index"], tmp_path / f"ref{p['index']}.img")
            assert a.picture_type == 3


def test_mp4_chapter_track_exact(shared_media: Path) -> None:
    path = shared_media / "mp4_h264_aac_text_chapter_track_chpl.mp4"
    ref = _ffprobe(path)
    with mediakit.open(path) as d:
        got = [(Fraction(c.start) * c.time_base, Fraction(c.end) * c.time_base, c.title) for c in d.chapters]
        want = [(Fraction(c["start"]) * Fraction(c["time_base"]), Fraction(c["end"]) * Fraction(c["time_base"]), c["tags"]["title"])
                for c in ref["chapters"]]
        assert got == want and want


def _mk_tag() -> Path:
    """The mk-tag beside the library under test."""
    tool = Path(os.environ.get("MEDIAKIT_LIBRARY", "")).parent / "mk-tag"
    if not tool.is_file():
        pytest.fail(f"mk-tag not found beside the library ({tool}); set MK_BIN", pytrace=False)
    return tool


@pytest.mark.parametrize("name", ["mp3_id3v2_apic_1400px_48k.mp3", "m4a_aac_mono_afconvert_apple_elst.mp4",
                                  "m4a_aac_8k_mono.m4a"])
def test_edit_tags_writes_the_bytes_mk_tag_writes(name: str, shared_media: Path, tmp_path: Path) -> None:
    """mediakit.edit_tags with a title set, an album removed and a cover gives the same file bytes
    as mk-tag with the same options and says how it wrote it (as mk-tag's message); a second
    call with the same title writes nothing ("unchanged"); in_place=False goes through a new
    file (another inode); a bad edit raises and leaves the file alone."""
    cover = tmp_path / "cover.jpg"
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=s=32x32", "-frames:v", "1", cover],
                   check=True)
    ours, ref = tmp_path / ("py_" + name), tmp_path / ("tool_" + name)
    for p in (ours, ref):
        p.write_bytes((shared_media / name).read_bytes())
    method = mediakit.edit_tags(ours, {"title": "From Python", "comment": "edit_tags"}, ["album"], cover=cover)
    tool = subprocess.run([_mk_tag(), ref, "--set", "title=From Python", "--set", "comment=edit_tags", "--remove", "album",
                           "--cover", cover], capture_output=True, check=True)
    said = {"in place": "in place", "temporary file": "through a temporary file", "remux": "remuxed"}[method]
    assert said in tool.stderr.decode(), (method, tool.stderr.decode())
    assert ours.read_bytes() == ref.read_bytes(), f"{name}: edit_tags and mk-tag wrote different files"
    # The title already has that value: nothing is written, in any format.
    assert mediakit.edit_tags(ours, {"title": "From Python"}) == "unchanged"
    with mediakit.open(ours) as d:
        assert d.metadata["title"] == "From Python"
    before = ours.read_bytes()
    with pytest.raises(mediakit.InvalidArgumentError):
        mediakit.edit_tags(ours, {"title": "x"}, ["title"])
    assert ours.read_bytes() == before
    ino = ours.stat().st_ino
    assert mediakit.edit_tags(ours, {"title": "Rewritten"}, in_place=False) in ("temporary file", "remux")
    assert ours.stat().st_ino != ino
