"""The metadata C API (include/mediakit/metadata.h) over a real file, against ffprobe and ffmpeg
(the Python API: Bindings/python/tests/test_metadata.py): the same
tags ffprobe prints (for a format whose libavformat names are the normalised ones: ID3), the
chapters' exact times and titles, and the cover's bytes as `ffmpeg -map 0:v -c copy` writes them;
AIFF markers (which FFmpeg does not read) against Python's aifc module, and AIFF instrument
settings (`INST`, nor that) against libsndfile."""
import json
import warnings
from fractions import Fraction

import pytest

import oracle_lib as lib
import sndfile_oracle
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


@pytest.mark.parametrize("where", ["after the sound", "before COMM"])
def test_c_api_and_mk_probe_give_aifcs_aiff_markers(where, metadata_dump, mk_probe, tmp_path):
    """An AIFF with a MARK chunk written by Python's aifc module (an AIFF reader and writer that
    is not MediaKit; it puts MARK after SSND), and the same chunk moved in front of COMM: the C
    API's markers and mk-probe's JSON equal aifc's getmarkers() (id, frame, name), in order."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import aifc   # scripts/deps.sh installs PyPI's standard-aifc where Python (3.13+) lacks it
    path = tmp_path / "markers.aiff"
    w = aifc.open(str(path), "wb")
    w.setnchannels(1)
    w.setsampwidth(3)
    w.setframerate(48000)
    for marker in [(4, 12, b"attack"), (9, 47999, b"sustain loop"), (1, 100, b"")]:
        w.setmark(*marker)
    w.writeframes(bytes(3 * 48000))
    w.close()
    if where == "before COMM":
        b = path.read_bytes()
        mark = b.index(b"MARK")
        size = int.from_bytes(b[mark + 4:mark + 8], "big")
        chunk = b[mark:mark + 8 + size + (size & 1)]
        rest = b[:mark] + b[mark + len(chunk):]
        path.write_bytes(rest[:12] + chunk + rest[12:])
    want = [(i, pos, name.decode()) for i, pos, name in aifc.open(str(path), "rb").getmarkers()]
    assert len(want) == 3
    proc = lib.run([metadata_dump, path])
    lib.check_ok(proc, [metadata_dump, path], who="metadata_dump")
    lines = [json.loads(l) for l in proc.stdout.decode().splitlines()]
    assert [(l["id"], l["frame"], l["name"]) for l in lines if l["kind"] == "marker"] == want
    probed = json.loads(lib.run([mk_probe, "--json", path]).stdout)
    assert [(m["id"], m["frame"], m["name"]) for m in probed["markers"]] == want
    assert probed["tracks"][0]["codec"] == "pcm_s24be"


# (case, INST fields, whether the chunk goes in front of COMM): loops between aifc's markers
# (ids 4 at frame 12, 9 at 7999, 1 at 100); a sustain loop that does not loop (libsndfile then
# counts no loop); detune and gain negative.
_INSTRUMENTS = [
    ("two loops, after the sound", dict(base_note=60, detune=-12, notes=(21, 108), velocities=(1, 127), gain=-6,
                                        sustain=(1, 4, 9), release=(2, 1, 4)), False),
    ("no loop, before COMM", dict(base_note=72, detune=50, notes=(0, 127), velocities=(64, 100), gain=3,
                                  sustain=(0, 0, 0), release=(0, 0, 0)), True),
    ("sustain only, before COMM", dict(base_note=36, detune=0, notes=(30, 40), velocities=(1, 1), gain=-32768,
                                       sustain=(1, 1, 9), release=(0, 9, 9)), True),
]


@pytest.mark.parametrize("case,fields,before_comm", _INSTRUMENTS, ids=[c for c, _, _ in _INSTRUMENTS])
def test_c_api_and_mk_probe_give_libsndfiles_aiff_instrument(case, fields, before_comm, metadata_dump, mk_probe, tmp_path):
    """An AIFF that aifc wrote with three markers, with an INST chunk laid out by Audio IFF 1.3's
    table: the C API's and mk-probe's instrument settings equal what libsndfile reads
    (SFC_GET_INSTRUMENT): notes, velocities, gain, and the frames of each loop that loops (the
    loops' play modes and marker ids, which libsndfile folds, against the chunk's fields)."""
    path = tmp_path / "instrument.aiff"
    sndfile_oracle.aiff_with_chunk(path, [(4, 12, b"attack"), (9, 7999, b"end"), (1, 100, b"")],
                                   sndfile_oracle.inst_chunk(**fields), before_comm)
    want = sndfile_oracle.instrument(path)
    assert want is not None, "libsndfile found no INST chunk"
    proc = lib.run([metadata_dump, path])
    lib.check_ok(proc, [metadata_dump, path], who="metadata_dump")
    dumped = [l for l in map(json.loads, proc.stdout.decode().splitlines()) if l["kind"] == "instrument"]
    probed = json.loads(lib.run([mk_probe, "--json", path]).stdout)
    assert len(dumped) == 1 and "instrument" in probed
    for got in (dumped[0], probed["instrument"]):
        assert {k: got[k] for k in want if k != "loops"} == {k: v for k, v in want.items() if k != "loops"}
        loops = [got["sustain_loop"], got["release_loop"]]
        looping = [(l["begin_frame"], l["end_frame"]) for l in loops if l["play_mode"] != 0]
        if loops[0]["play_mode"] == 0:
            looping = []   # libsndfile stops counting at a sustain loop that does not loop
        assert looping == want["loops"]
        assert [(l["play_mode"], l["begin_marker"], l["end_marker"]) for l in loops] == [fields["sustain"], fields["release"]]
    # A file without the chunk has none, in both.
    plain = tmp_path / "plain.aiff"
    sndfile_oracle.aiff_with_chunk(plain, [], b"", before_comm)
    assert sndfile_oracle.instrument(plain) is None
    assert not [l for l in lib.run([metadata_dump, plain]).stdout.decode().splitlines() if '"instrument"' in l]
    assert "instrument" not in json.loads(lib.run([mk_probe, "--json", plain]).stdout)


def test_remux_tag_edit_and_transcode_keep_aiff_markers_and_instrument(mk_remux, mk_transcode, mk_bin, tmp_path):
    """mk-remux of an AIFF with MARK (aifc's) and INST chunks into AIFF (which ffmpeg's remux
    drops) keeps both: aifc's getmarkers() and libsndfile's instrument of the output equal the
    input's, the samples are aifc's readframes() of the input, and the chunks now come before
    COMM, where a reader of a pipe finds them. mk-tag's rewrite keeps them too; mk-transcode
    to twice the rate doubles every marker's frame and loop frame."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import aifc
    src, out = tmp_path / "in.aiff", tmp_path / "out.aiff"
    sndfile_oracle.aiff_with_chunk(src, [(4, 12, b"attack"), (9, 7999, b"end"), (1, 100, b"")],
                                   sndfile_oracle.inst_chunk(60, -12, (21, 108), (1, 127), -6, (1, 4, 9), (2, 1, 4)), False)
    lib.check_ok(lib.run([mk_remux, src, out]), [mk_remux, src, out], who="mk-remux")
    a, b = aifc.open(str(src), "rb"), aifc.open(str(out), "rb")
    assert b.getmarkers() == a.getmarkers() and len(a.getmarkers()) == 3
    assert b.readframes(b.getnframes()) == a.readframes(a.getnframes())
    assert sndfile_oracle.instrument(out) == sndfile_oracle.instrument(src) is not None
    data = out.read_bytes()
    assert data.index(b"MARK") < data.index(b"INST") < data.index(b"COMM") < data.index(b"SSND")
    tagged = tmp_path / "tagged.aiff"
    tagged.write_bytes(src.read_bytes())
    lib.check_ok(lib.run([mk_bin / "mk-tag", tagged, "--set", "title=Take 2"]), [mk_bin / "mk-tag", tagged], who="mk-tag")
    assert aifc.open(str(tagged), "rb").getmarkers() == a.getmarkers()
    assert sndfile_oracle.instrument(tagged) == sndfile_oracle.instrument(src)
    doubled = tmp_path / "16k.aiff"
    lib.check_ok(lib.run([mk_transcode, src, doubled, "--sample-rate", "16000"]), [mk_transcode, src, doubled], who="mk-transcode")
    assert aifc.open(str(doubled), "rb").getframerate() == 16000
    assert aifc.open(str(doubled), "rb").getmarkers() == [(i, 2 * pos, name) for i, pos, name in a.getmarkers()]
    want = sndfile_oracle.instrument(src)
    assert want is not None
    assert sndfile_oracle.instrument(doubled) == dict(want, loops=[(2 * s, 2 * e) for s, e in want["loops"]])


@pytest.fixture(scope="module")
def tag_edit(mk_bin, tmp_path_factory):
    return _build(lib.REPO / "Tests" / "c" / "tag_edit.c", tmp_path_factory.mktemp("tag-edit") / "tag_edit", _libdir(mk_bin))


# (file, how mk-tag writes the edit: MK_TAG_WRITTEN_IN_PLACE 0, _TEMPORARY_FILE 1).
_TAG_EDIT_FILES = [("mp3_id3v2_apic_1400px_48k.mp3", 1), ("m4a_aac_mono_afconvert_apple_elst.mp4", 0),
                   ("breadth/flac_androidx_af3fe8_bear_with_picture.flac", 1)]


@pytest.mark.parametrize("name,method", _TAG_EDIT_FILES, ids=[n.split("/")[-1][:24] for n, _ in _TAG_EDIT_FILES])
def test_c_tag_edit_writes_the_bytes_mk_tag_writes(name, method, tag_edit, mk_bin, shared_media, tmp_path):
    """mk_tag_edit with a title, a comment, an album removed and a cover gives the same file
    bytes as mk-tag with the same options, and says how it wrote it (mk-tag's message); bad
    arguments are refused (MK_EINVAL) first, without touching the file."""
    cover = tmp_path / "cover.jpg"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=s=32x32", "-frames:v", "1", cover]
    lib.oracle_ok(lib.run(cmd), cmd)
    ours, ref = tmp_path / ("c_" + name.split("/")[-1]), tmp_path / ("tool_" + name.split("/")[-1])
    for p in (ours, ref):
        p.write_bytes((shared_media / name).read_bytes())
    proc = lib.run([tag_edit, ours, cover, "title=From C", "comment=Set through mk_tag_edit", "--", "album"])
    lib.check_ok(proc, [tag_edit, ours], who="tag_edit")
    tool = [mk_bin / "mk-tag", ref, "--set", "title=From C", "--set", "comment=Set through mk_tag_edit", "--remove", "album",
            "--cover", cover]
    proc2 = lib.run(tool)
    lib.check_ok(proc2, tool, who="mk-tag")
    assert int(proc.stdout) == method, proc2.stderr.decode()
    assert ("in place" in proc2.stderr.decode()) == (method == 0), proc2.stderr.decode()
    assert ours.read_bytes() == ref.read_bytes(), f"{name}: mk_tag_edit and mk-tag wrote different files"


def test_c_tag_edit_under_valgrind(mk_bin, shared_media, tmp_path):
    """tag_edit (the refusals, then an edit in place of an M4A and one through a temporary file
    of an MP3) under valgrind: "definitely lost: 0 bytes", no invalid read or write."""
    import re
    import shutil

    from test_capi import _stripped_libdir
    if not shutil.which("valgrind"):
        pytest.fail("valgrind is missing: scripts/deps.sh installs it", pytrace=False)
    program = _build(lib.REPO / "Tests" / "c" / "tag_edit.c", tmp_path / "tag_edit", _stripped_libdir(mk_bin, tmp_path))
    supp = lib.REPO / "Tests" / "c" / "valgrind.supp"
    for name in ("m4a_aac_mono_afconvert_apple_elst.mp4", MP3):
        path = tmp_path / name
        path.write_bytes((shared_media / name).read_bytes())
        proc = lib.run(["valgrind", "--leak-check=full", f"--suppressions={supp}", "--error-exitcode=3",
                        program, path, "-", "title=Under valgrind", "--", "album"], timeout=600)
        err = proc.stderr.decode()
        # (valgrind's exit status counts the Swift runtime's "possibly lost" metadata caches, as
        # test_capi's run does; the program's own result is its output.)
        assert "definitely lost: 0 bytes" in err or "no leaks are possible" in err, err[-3000:]
        assert "Invalid read" not in err and "Invalid write" not in err, err[-5000:]
        assert re.fullmatch(rb"[01]\n", proc.stdout), proc.stdout
