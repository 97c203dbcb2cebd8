"""The metadata C API (include/mediakit/metadata.h) over a real file, against ffprobe and ffmpeg
(the Python API: Bindings/python/tests/test_metadata.py): the same
tags ffprobe prints (for a format whose libavformat names are the normalised ones: ID3), the
chapters' exact times and titles, and the cover's bytes as `ffmpeg -map 0:v -c copy` writes them."""
import json
from fractions import Fraction

import pytest

import oracle_lib as lib
from test_capi import _build, _libdir

MP3 = "mp3_id3v2_apic_1400px_48k.mp3"           # ID3v2.3: text frames, TXXX, COMM, APIC, CHAP


@pytest.fixture(scope="module")
def metadata_dump(mk_bin, tmp_path_factory):
    return _build(lib.REPO / "Tests" / "c" / "metadata_dump.c", tmp_path_factory.mktemp("metadata-dump") / "metadata_dump", _libdir(mk_bin))


def _ffprobe(path):
    return json.loads(lib.run(["ffprobe", "-v", "error", "-show_format", "-show_streams", "-show_chapters", "-of", "json", path]).stdout)


def _cover(path, index, out):
    lib.run(["ffmpeg", "-v", "error", "-y", "-i", path, "-map", f"0:{index}", "-c", "copy", "-f", "image2", out])
    return out.read_bytes()


def test_c_api_gives_ffprobes_tags_chapters_and_cover(metadata_dump, shared_media, tmp_path):
    path = shared_media / MP3
    proc = lib.run([metadata_dump, path, tmp_path])
    lib.check_ok(proc, [metadata_dump, path], who="metadata_dump")
    lines = [json.loads(l) for l in proc.stdout.decode().splitlines()]
    ref = _ffprobe(path)
    # ID3's normalised keys are libavformat's for these frames: title, artist, album, genre, encoder.
    tags = {l["key"]: l["value"] for l in lines if l["kind"] == "tag"}
    for key in ("title", "artist", "album", "genre", "encoder"):
        assert tags[key] == ref["format"]["tags"][key], key
    natives = {l["native_key"] for l in lines if l["kind"] == "tag"}
    assert {"TIT2", "TPE1", "TALB"} <= natives
    chapters = [l for l in lines if l["kind"] == "chapter"]
    assert [(Fraction(c["start"] * c["num"], c["den"]), Fraction(c["end"] * c["num"], c["den"])) for c in chapters] == \
        [(Fraction(c["start"]) * Fraction(c["time_base"]), Fraction(c["end"]) * Fraction(c["time_base"])) for c in ref["chapters"]]
    # A chapter's title is its TIT2 sub-frame, when it has one (libavformat titles the others by element id).
    assert chapters[0]["title"] == ref["chapters"][0]["tags"]["title"]
    pictures = [s for s in ref["streams"] if s["disposition"].get("attached_pic")]
    attachments = [l for l in lines if l["kind"] == "attachment"]
    assert len(attachments) == len(pictures) == 1
    assert (tmp_path / "0").read_bytes() == _cover(path, pictures[0]["index"], tmp_path / "ref.jpg")
    assert attachments[0]["description"] == pictures[0]["tags"]["title"]
