"""Tags, chapters and cover art of real files against ffprobe / ffmpeg (issue 33 items 1-2).

For every file of ../shared/media and ../shared/media/breadth (MANIFEST.tsv) that a native
demuxer whose tags are in the model opens, one `ffprobe -show_format -show_streams
-show_chapters` run is the oracle for `mk-probe --json` (for a file read through the FFmpeg
plugin, its format tags only):
- `format.tags` equal ffprobe's `format.tags`;
- each track's `tags` equal the tags of ffprobe's stream with the same index (attached pictures,
  which ffprobe lists as extra video streams with `disposition.attached_pic`, are not tracks: see
  docs/metadata.md);
- chapters: the same start / end times (ffprobe's `start_time` / `end_time`, 6 decimals) and titles;
- attached pictures: one per ffprobe `attached_pic` stream, with its description (ffprobe's
  `title`) and picture type name (`comment`); the first one's bytes, written by `mk-probe
  --cover-out`, equal `ffmpeg -map 0:INDEX -c copy -f image2`'s.
The only differences allowed are those of ALLOWED, each with its reason. MPEG-TS is compared for
its streams' tags (ffprobe shows the SDT's service names as program tags, not format tags).
"""
import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import oracle_lib as lib

# Demuxers whose tags are in the model (mk-probe's format.demuxer).
IN_MODEL = {"mp3", "aac", "matroska", "ogg", "flac", "wav", "aiff", "caf", "mp4", "mpegts"}

# (file, where, key) -> why MediaKit differs from ffprobe there.
ALLOWED = {
    ("aac_adts_lc_with_id3v2_prefix.aac", "format", "description"):
        "a second ID3v2 tag sits after the first ADTS frame: FFmpeg's aac demuxer merges ID3 tags it "
        "meets while reading packets (aacdec.c handle_id3); MediaKit reads the tags in front of the audio",
}


def _files(root: Path) -> list[Path]:
    out = []
    for folder in (root, root / "breadth"):
        manifest = folder / "MANIFEST.tsv"
        if not manifest.is_file():
            continue
        for line in manifest.read_text().splitlines()[1:]:
            name = line.split("\t")[0]
            if name and (folder / name).is_file():
                out.append(folder / name)
    return out


def _compare(path: Path, mk_probe: Path) -> tuple[str, list[str], int]:
    """(demuxer, problems, attached pictures checked) for one file; demuxer "" when not in scope."""
    proc = subprocess.run([str(mk_probe), "--json", str(path)], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        return "", [], 0
    ours = json.loads(proc.stdout)
    demuxer = ours["format"].get("demuxer", "")
    # A file read through the FFmpeg plugin (plugin ABI 2.5): its file-level tags, which the
    # plugin hands over from libavformat; its streams are checked by the plugin's own tests.
    through_plugin = demuxer.startswith("ffmpeg:")
    if demuxer not in IN_MODEL and not through_plugin:
        return "", [], 0
    ref_proc = lib.run(["ffprobe", "-v", "error", "-show_format", "-show_streams", "-show_chapters", "-of", "json", path])
    ref = json.loads(ref_proc.stdout or b"{}")
    if "format" not in ref:
        return "", [], 0      # ffprobe cannot open it: nothing to compare with
    problems = []

    def diff(where: str, mine: dict, theirs: dict) -> None:
        for key in sorted(set(mine) | set(theirs)):
            if mine.get(key) != theirs.get(key) and (path.name, where, key) not in ALLOWED:
                problems.append(f"{where} tag {key!r}: ours {mine.get(key)!r}, ffprobe {theirs.get(key)!r}")

    diff("format", ours["format"].get("tags", {}), ref["format"].get("tags", {}))
    if through_plugin:
        return demuxer, problems, 0
    streams = {s["index"]: s for s in ref.get("streams", [])}
    pictures = [s for s in ref.get("streams", []) if s.get("disposition", {}).get("attached_pic")]
    for t in ours["tracks"]:
        s = streams.get(t["index"])
        if s is None or s.get("disposition", {}).get("attached_pic"):
            problems.append(f"track {t['index']}: ffprobe has no such non-picture stream")
            continue
        diff(f"stream {t['index']}", t.get("tags", {}), s.get("tags", {}))
    want = [(c["start_time"], c["end_time"], c.get("tags", {}).get("title")) for c in ref.get("chapters", [])]
    got = [(c["start_time"], c["end_time"], c.get("tags", {}).get("title")) for c in ours.get("chapters", [])]
    if want != got:
        problems.append(f"chapters: ours {got}, ffprobe {want}")
    ours_pics = [a for a in ours.get("attachments", []) if a["picture_type"] >= 0]
    if len(ours_pics) != len(pictures):
        problems.append(f"{len(ours_pics)} pictures, ffprobe {len(pictures)} attached_pic streams")
    else:
        names = ["Other", "32x32 pixels 'file icon'", "Other file icon", "Cover (front)", "Cover (back)", "Leaflet page",
                 "Media (e.g. label side of CD)", "Lead artist/lead performer/soloist", "Artist/performer", "Conductor",
                 "Band/Orchestra", "Composer", "Lyricist/text writer", "Recording Location", "During recording",
                 "During performance", "Movie/video screen capture", "A bright coloured fish", "Illustration",
                 "Band/artist logotype", "Publisher/Studio logotype"]   # ID3v2.4 section 4.14
        for a, s in zip(ours_pics, pictures):
            tags = s.get("tags", {})
            if demuxer == "mp4":
                # libavformat gives an iTunes covr stream no tags (mov_read_covr); ours are front covers.
                if tags or a["picture_type"] != 3:
                    problems.append(f"picture {s['index']}: ours {(a['description'], a['picture_type'])}, ffprobe {tags}")
            elif a["file_name"] and tags == {a["description"]: a["file_name"]}:
                pass    # an APEv2 binary item: ffprobe's stream tag is the item's key, valued with its file name (apetag.c)
            elif demuxer != "matroska" and (tags.get("title", ""), tags.get("comment")) != (a["description"], names[a["picture_type"]]):
                problems.append(f"picture {s['index']}: ours {(a['description'], a['picture_type'])}, ffprobe {tags}")
    return demuxer, problems, len(pictures)


def test_tags_and_chapters_equal_ffprobe(shared_media, mk_probe):
    files = _files(shared_media)
    assert files, "MANIFEST.tsv lists no file"
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda p: (p, *_compare(p, mk_probe)), files))
    compared = [(p, problems) for p, demuxer, problems, _ in results if demuxer]
    bad = [f"{p.name}: " + "; ".join(problems) for p, problems in compared if problems]
    print(f"{len(compared) - len(bad)} of {len(compared)} files in the model give ffprobe's tags and chapters")
    assert len(compared) >= 50, f"only {len(compared)} files were compared"
    assert not bad, "\n".join(bad)


def test_first_cover_is_ffmpegs_attached_picture(shared_media, mk_probe, tmp_path):
    """`mk-probe --cover-out` writes the bytes `ffmpeg -map 0:INDEX -c copy -f image2` extracts
    from the first attached_pic stream, for every file in the model that has one."""
    checked = 0
    for path in _files(shared_media):
        if path.suffix.lower() not in {".mp3", ".aac", ".flac", ".ogg", ".opus", ".oga", ".mka", ".mkv", ".webm", ".wav", ".aif", ".aiff", ".caf",
                                         ".mp4", ".m4a", ".m4b", ".mov", ".3gp"}:
            continue
        # The command test_tags_and_chapters_equal_ffprobe runs on the same files: one ffprobe
        # run per file serves both (the oracle cache answers the second).
        ref = json.loads(lib.run(["ffprobe", "-v", "error", "-show_format", "-show_streams", "-show_chapters",
                                  "-of", "json", path]).stdout or b"{}")
        pics = [s for s in ref.get("streams", []) if s.get("disposition", {}).get("attached_pic")]
        if not pics:
            continue
        ours = tmp_path / f"{path.stem}.ours"
        proc = lib.run([mk_probe, "--cover-out", ours, path])
        if proc.returncode != 0 and b"no MPEG audio" in proc.stderr:
            continue      # tags without audio: the file does not open (test_audio_streams)
        assert proc.returncode == 0, (path.name, proc.stderr)
        theirs = tmp_path / f"{path.stem}.ref"
        lib.run(["ffmpeg", "-v", "error", "-y", "-i", path, "-map", f"0:{pics[0]['index']}", "-c", "copy",
                 "-f", "image2", theirs])
        assert ours.read_bytes() == theirs.read_bytes(), path.name
        checked += 1
    assert checked >= 3, f"only {checked} files with a cover were checked"


def _patched(src: Path, out: Path, old: bytes, new: bytes) -> None:
    """`src` copied to `out` with the last `old` replaced by `new` (same length)."""
    data = src.read_bytes()
    at = data.rfind(old)
    assert len(old) == len(new) and at >= 0, (old, src)
    out.write_bytes(data[:at] + new + data[at + len(old):])


def test_mp4_atoms_the_corpus_lacks_equal_ffprobe(shared_media, mk_probe, tmp_path):
    """iTunes atoms, QuickTime udta strings and chapters the corpus has few of, written by
    mutagen (every ilst atom FFmpeg maps, freeform ---- items, a PNG covr) and by ffmpeg (an
    M4A and a MOV with three chapters: a text chapter track and Nero chpl; QuickTime udta
    strings with a language), then compared with ffprobe as the corpus files are. Two patched
    copies show FFmpeg's chapter precedence: the chpl titles changed (the chapter track's
    titles win), and the tref renamed (the chpl chapters alone, their ends filled)."""
    import mutagen.mp4 as mutagen_mp4
    src = shared_media / "m4a_aac_8k_mono.m4a"
    assert src.is_file(), src
    png = tmp_path / "cover.png"
    lib.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "color=red:s=8x8", "-frames:v", "1", png])
    tagged = tmp_path / "itunes.m4a"
    tagged.write_bytes(src.read_bytes())
    m = mutagen_mp4.MP4(tagged)
    assert m.tags is not None
    t = m.tags
    for atom, value in {"\xa9nam": "Title \u00fc", "\xa9alb": "Album", "aART": "Album Artist", "\xa9day": "2001-02-03",
                        "\xa9gen": "Jazz", "\xa9cmt": "Comment", "\xa9lyr": "la la", "\xa9grp": "Group", "cprt": "(c) 2001",
                        "desc": "Desc", "ldes": "Long desc", "tvsh": "Show", "tvnn": "Net", "tven": "E1", "purd": "2001-01-01",
                        "soar": "Artist, The", "sonm": "Title sort", "soaa": "AA sort", "soal": "Album sort",
                        "soco": "Comp sort", "sosn": "Show sort", "keyw": "k1", "catg": "Cat"}.items():
        t[atom] = [value]
    t["trkn"], t["disk"] = [(3, 12)], [(1, 2)]
    t["cpil"], t["pgap"], t["pcst"] = True, True, True
    t["tmpo"], t["stik"], t["rtng"], t["hdvd"], t["tvsn"], t["tves"] = [120], [9], [2], [1], [4], [7]
    t["----:com.apple.iTunes:MY KEY"] = [mutagen_mp4.MP4FreeForm(b"my value")]
    t["----:com.apple.iTunes:iTunNORM"] = [mutagen_mp4.MP4FreeForm(b" 00000001 00000002")]
    t["covr"] = [mutagen_mp4.MP4Cover(png.read_bytes(), mutagen_mp4.MP4Cover.FORMAT_PNG)]
    m.save()

    meta = tmp_path / "chapters.txt"
    meta.write_text(";FFMETADATA1\ntitle=\u00dcn\u00efcode title\n"
                    "[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=400\ntitle=First\n"
                    "[CHAPTER]\nTIMEBASE=1/1000\nSTART=400\nEND=900\ntitle=Zweite \u00c4\n"
                    "[CHAPTER]\nTIMEBASE=1/1000\nSTART=900\nEND=1294\ntitle=Third\n")
    made = []
    for name, extra in (("chapters.m4a", []), ("chapters.mov", ["-metadata:s:a:0", "language=fra", "-f", "mov"])):
        out = tmp_path / name
        lib.run(["ffmpeg", "-v", "error", "-y", "-i", src, "-i", meta, "-map_metadata", "1", "-map_chapters", "1", "-map", "0",
                 "-c", "copy", "-metadata", "artist=Art", "-metadata", "comment=a comment", *extra, out])
        made.append(out)
    track_wins = tmp_path / "chpl_titles_changed.m4a"
    _patched(made[0], track_wins, b"\x05First", b"\x05Fxrst")   # the chpl (moov after mdat), not the text sample
    chpl_only = tmp_path / "chpl_only.m4a"
    _patched(made[0], chpl_only, b"\x00\x00\x00\x0cchap", b"\x00\x00\x00\x0cxhap")
    # Data types mutagen does not write: UTF-16 (2) and JPEG (13) text items, which FFmpeg skips,
    # and an implicit type (0), Mac OS Roman text.
    types = tmp_path / "data_types.m4a"
    data = bytearray(tagged.read_bytes())
    for atom, data_type in ((b"\xa9nam", 2), (b"\xa9cmt", 13), (b"\xa9alb", 0)):
        at = data.index(b"data", data.index(atom)) + 4
        data[at:at + 4] = data_type.to_bytes(4, "big")
    data[data.index(b"Album", data.index(b"\xa9alb")) + 1] = 0xE9      # Mac OS Roman "\u00c8"
    types.write_bytes(bytes(data))

    for path in (tagged, *made, track_wins, chpl_only, types):
        demuxer, problems, pictures = _compare(path, mk_probe)
        assert demuxer == "mp4", path.name
        assert not problems, f"{path.name}: " + "; ".join(problems)
    # The cases are what they claim: the atoms reached ffprobe, and the precedence shows.
    ref = json.loads(lib.run(["ffprobe", "-v", "error", "-show_chapters", "-show_format", "-of", "json", track_wins]).stdout)
    assert [c["tags"]["title"] for c in ref["chapters"]] == ["First", "Zweite \u00c4", "Third"]
    ref = json.loads(lib.run(["ffprobe", "-v", "error", "-show_chapters", "-of", "json", chpl_only]).stdout)
    assert [c["tags"]["title"] for c in ref["chapters"]] == ["First", "Zweite \u00c4", "Third"]
    assert ref["chapters"][0]["time_base"] == "1/10000000"
    ref = json.loads(lib.run(["ffprobe", "-v", "error", "-show_format", "-of", "json", tagged]).stdout)
    assert ref["format"]["tags"]["track"] == "3/12" and ref["format"]["tags"]["MY KEY"] == "my value"
    ref = json.loads(lib.run(["ffprobe", "-v", "error", "-show_format", "-of", "json", types]).stdout)
    assert ref["format"]["tags"]["album"] == "A\u00c8bum" and "title" not in ref["format"]["tags"]
    ours = tmp_path / "cover.ours"
    assert lib.run([mk_probe, "--cover-out", ours, tagged]).returncode == 0
    assert ours.read_bytes() == png.read_bytes()


def test_apev2_tags_as_ffprobe(shared_media, mk_probe, tmp_path):
    """APEv2 tags written by mutagen (text items and a "Cover Art (Front)" JPEG) at the end of
    an ADTS file, of the same file with an ID3v2 tag in front (FFmpeg's aac demuxer keeps the
    APE text and discards the ID3v2 text, its PRIV frames staying), and of an MP3 file (FFmpeg's
    mp3 demuxer does not read APE tags: no tags), compared with ffprobe as the corpus files are;
    the cover's bytes with ffmpeg's copy of the attached picture."""
    import mutagen.apev2
    import mutagen.id3
    jpeg = tmp_path / "cover.jpg"
    lib.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "color=blue:s=8x8", "-frames:v", "1", jpeg])
    plain = tmp_path / "adts.aac"
    lib.run(["ffmpeg", "-v", "error", "-y", "-i", shared_media / "m4a_aac_8k_mono.m4a", "-map_metadata", "-1", "-c", "copy", "-f", "adts", plain])
    id3_text = tmp_path / "id3_text.aac"
    id3_text.write_bytes(plain.read_bytes())
    id3 = mutagen.id3.ID3()
    id3.add(mutagen.id3.TIT2(encoding=3, text="id3 title"))
    id3.add(mutagen.id3.TALB(encoding=3, text="id3 album"))
    id3.save(id3_text)
    cases = []
    for name, path in (("plain.aac", plain), ("id3_priv.aac", shared_media / "aac_adts_lc_22k_id3_priv_timestamp_hls_packed.aac"),
                       ("plain.mp3", shared_media / "mp3_cbr_56k_mono_no_xing.mp3"), ("id3_text_ape.aac", id3_text)):
        out = tmp_path / name
        out.write_bytes(path.read_bytes())
        tag = mutagen.apev2.APEv2()
        tag["Title"], tag["Artist"], tag["Track"], tag["Comment"] = "ape title", "ape artist", "3/12", "two\x00values"
        tag["Cover Art (Front)"] = mutagen.apev2.APEValue(b"front.jpg\x00" + jpeg.read_bytes(), mutagen.apev2.BINARY)
        tag.save(out)
        cases.append(out)
    for path in cases:
        demuxer, problems, pictures = _compare(path, mk_probe)
        assert demuxer in ("aac", "mp3"), path.name
        assert not problems, f"{path.name}: " + "; ".join(problems)
    ref = json.loads(lib.run(["ffprobe", "-v", "error", "-show_format", "-show_streams", "-of", "json", cases[1]]).stdout)
    tags = ref["format"]["tags"]
    assert tags["Title"] == "ape title" and any(k.startswith("id3v2_priv.") for k in tags), tags
    pics = [s for s in ref["streams"] if s.get("disposition", {}).get("attached_pic")]
    assert pics, ref["streams"]
    ours = tmp_path / "cover.ours"
    assert lib.run([mk_probe, "--cover-out", ours, cases[0]]).returncode == 0
    assert ours.read_bytes() == jpeg.read_bytes()
    ref = json.loads(lib.run(["ffprobe", "-v", "error", "-show_format", "-of", "json", cases[2]]).stdout)
    assert "Title" not in ref["format"].get("tags", {})
    ref = json.loads(lib.run(["ffprobe", "-v", "error", "-show_format", "-of", "json", cases[3]]).stdout)
    assert ref["format"]["tags"]["Title"] == "ape title" and "album" not in ref["format"]["tags"], ref["format"]["tags"]
