"""Tags, chapters and cover art of real files against ffprobe / ffmpeg (issue 33 items 1-2).

For every file of ../shared/media and ../shared/media/breadth (MANIFEST.tsv) that a native
demuxer whose tags are in the model opens, one `ffprobe -show_format -show_streams
-show_chapters` run is the oracle for `mk-probe --json`:
- `format.tags` equal ffprobe's `format.tags`;
- each track's `tags` equal the tags of ffprobe's stream with the same index (attached pictures,
  which ffprobe lists as extra video streams with `disposition.attached_pic`, are not tracks: see
  docs/metadata.md);
- chapters: the same start / end times (ffprobe's `start_time` / `end_time`, 6 decimals) and titles;
- attached pictures: one per ffprobe `attached_pic` stream, with its description (ffprobe's
  `title`) and picture type name (`comment`); the first one's bytes, written by `mk-probe
  --cover-out`, equal `ffmpeg -map 0:INDEX -c copy -f image2`'s.
The only differences allowed are those of ALLOWED, each with its reason. The containers whose
tags are not in the model yet (MPEG-TS) are outside this test: see docs/metadata.md "Not done yet".
"""
import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import oracle_lib as lib

# Demuxers whose tags are in the model (mk-probe's format.demuxer).
IN_MODEL = {"mp3", "aac", "matroska", "ogg", "flac", "wav", "aiff", "caf", "mp4"}

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
    if demuxer not in IN_MODEL:
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
        ref = json.loads(lib.run(["ffprobe", "-v", "error", "-show_streams", "-of", "json", path]).stdout or b"{}")
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
