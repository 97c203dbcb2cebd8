"""mk-tag, the tag editor (issue 33, item 3): tags set and removed and a cover put in without a
remux where the format allows it, never a half-written file.

Oracles:
  mutagen  reads the edited file (MP3, FLAC, M4A, Ogg Vorbis, Ogg Opus): the values set, the
           keys removed gone, the tags not edited kept (mutagen's easy keys).
  ffprobe  `-show_format -show_streams` of the edited file: the same, in the format's or the
           audio stream's tags (Matroska and WAV, which mutagen does not read, checked here
           only); the cover's bytes as ffmpeg copies its attached picture out equal the image's.
  payload  `ffmpeg -map 0:a -c copy -f md5` of the audio is the same before and after.
  kernel   st_ino and st_size: an edit that fits the padding is made in place (the same inode,
           the same size); one that does not goes through a new file (another inode).
  SIGKILL  mk-tag killed at several points of a rewrite of a 64 MiB MP3: the file is either
           byte-identical to the old one, or a new one that mutagen and ffprobe read with the
           new tag and the old audio bytes; the next run removes the temporary file left.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

import oracle_lib as lib

MP3_APIC = "mp3_id3v2_apic_1400px_48k.mp3"               # ID3v2.4? tags, TXXX, PRIV, APIC
MP3_V23 = "mp3_mpeg2_24k_lame_vbr_v2_xing_38s.mp3"       # ID3v2.3 (8306 B, PRIV XMP) + ID3v1
FLAC_COVER = "breadth/flac_androidx_af3fe8_bear_with_picture.flac"  # SEEKTABLE, PICTURE, PADDING
FLAC_TAGS = "breadth/flac_tinytag_7a2191_flac1.5sStereo.flac"       # VORBIS_COMMENT, no padding
M4A = "m4a_aac_8k_covr_jpeg_bmp.m4a"                      # ilst with two covr pictures
OGG = "ogg_vorbis_mono_metadata_block_picture.ogg"       # Vorbis comments, METADATA_BLOCK_PICTURE
OPUS = "ogg_opus_stereo_tiny_155b.opus"
MKA = "mka_opus_5p1.mka"

TITLE = "Tagged — title ü"

# (file, key removed (present before), mutagen reads it, a cover goes in). The Matroska muxer
# writes its own ENCODER tag and MKA holds no other; WAV's INFO list holds no album_artist.
CASES = [
    (MP3_APIC, "album", True, True),
    (MP3_V23, "date", True, False),
    (FLAC_COVER, None, True, True),
    (FLAC_TAGS, "genre", True, False),
    (M4A, "composer", True, True),
    (OGG, "artist", True, True),
    (OPUS, None, True, False),
    (MKA, None, False, True),
    ("gen:wav", "artist", False, False),
]


@pytest.fixture(scope="module")
def mk_tag(mk_bin: Path) -> Path:
    path = mk_bin / "mk-tag"
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"mk-tag not found in BIN ({mk_bin}); run `make build` or set MK_BIN", pytrace=False)
    return path


@pytest.fixture(scope="module")
def cover(tmp_path_factory) -> Path:
    """A 64x64 JPEG made by ffmpeg."""
    out = tmp_path_factory.mktemp("cover") / "cover.jpg"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=s=64x64", "-frames:v", "1", out]
    lib.oracle_ok(lib.run(cmd), cmd)
    return out


def _source(name: str, shared_media: Path | None, tmp_path: Path) -> Path:
    """A copy of the input in `tmp_path` (a generated WAV with INFO tags for "gen:wav")."""
    if name == "gen:wav":
        out = tmp_path / "gen.wav"
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=d=1", "-c:a", "pcm_s16le",
               "-metadata", "title=Generated", "-metadata", "artist=Generator", "-metadata", "album=Gen album", out]
        lib.oracle_ok(lib.run(cmd), cmd)
        return out
    assert shared_media is not None
    src = shared_media / name
    out = tmp_path / Path(name).name
    shutil.copyfile(src, out)
    return out


def _probe(path: Path) -> dict:
    cmd = ["ffprobe", "-v", "error", "-show_format", "-show_streams", "-of", "json", path]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return json.loads(proc.stdout)


def _ffprobe_tags(path: Path) -> dict[str, str]:
    """The format's tags and the first audio stream's, keys lower-cased."""
    info = _probe(path)
    audio = next(s for s in info["streams"] if s.get("codec_type") == "audio")
    tags = {k.lower(): v for k, v in (audio.get("tags") or {}).items()}
    tags.update({k.lower(): v for k, v in (info["format"].get("tags") or {}).items()})
    return tags


_cover_bytes = lib.first_attached_picture


def _audio_md5(path: Path) -> str:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:a:0", "-c", "copy", "-f", "md5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return proc.stdout.decode().strip()


def _mutagen_easy(path: Path) -> dict[str, list[str]]:
    import mutagen

    f = mutagen.File(path, easy=True)
    assert f is not None, f"mutagen does not recognise {path.name}"
    return {k.lower(): list(v) for k, v in (f.tags or {}).items()}


def _tag(mk_tag: Path, path: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [mk_tag, path, *args]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    return proc


@pytest.mark.parametrize("name,removed,mutagen_reads,with_cover", CASES, ids=[Path(c[0]).stem[:28] for c in CASES])
def test_set_remove_cover(name, removed, mutagen_reads, with_cover, mk_tag, cover, tmp_path, request):
    """--set, --remove and --cover on a real file: ffprobe and mutagen read the new values, the
    removed key is gone, a tag not edited is kept, the cover's bytes are the image's, the audio
    packets are the same."""
    shared = request.getfixturevalue("shared_media") if not name.startswith("gen:") else None
    path = _source(name, shared, tmp_path)
    before = _ffprobe_tags(path)
    md5 = _audio_md5(path)
    if removed:
        assert removed in before, f"test input: {removed} not in {before}"
    kept = sorted(k for k in before if k not in {"title", "album_artist", removed, "encoder", "duration"}
                  and not k.startswith(("major_brand", "minor_version", "compatible_brands", "handler_name", "vendor_id", "language")))
    args = ["--set", f"title={TITLE}"] + ([] if name == "gen:wav" else ["--set", "album_artist=Somebody Else"])
    if removed:
        args += ["--remove", removed]
    if with_cover:
        args += ["--cover", str(cover)]
    _tag(mk_tag, path, *args)

    after = _ffprobe_tags(path)
    assert after.get("title") == TITLE, f"ffprobe's tags after the edit: {after}"
    if name != "gen:wav":
        assert after.get("album_artist") == "Somebody Else", f"ffprobe's tags after the edit: {after}"
    if removed:
        assert removed not in after, f"{removed} still there: {after}"
    for k in kept:
        assert after.get(k) == before[k], f"{k}: {before[k]!r} before, {after.get(k)!r} after"
    assert _audio_md5(path) == md5, "the audio packets changed"
    if with_cover:
        assert _cover_bytes(path) == cover.read_bytes(), "the first attached picture is not the cover given"
    if mutagen_reads:
        easy = _mutagen_easy(path)
        assert easy.get("title") == [TITLE], f"mutagen: {easy}"
        assert easy.get("albumartist") == ["Somebody Else"], f"mutagen: {easy}"
        if removed:
            assert removed not in easy, f"mutagen still reads {removed}: {easy}"


def test_in_place_when_the_padding_allows(mk_tag, shared_media, tmp_path):
    """MP3 and FLAC: an edit that fits the tag's padding keeps the inode and the size, one that
    does not (a 20 kB comment) makes a new file; both read back (mutagen), audio unchanged."""
    for name in (MP3_APIC, FLAC_COVER):
        path = _source(name, shared_media, tmp_path)
        md5 = _audio_md5(path)
        # The first edit writes the file again with padding (MP3_APIC's tag has none) or
        # fits the reference encoder's 8 kB PADDING (FLAC_COVER).
        _tag(mk_tag, path, "--set", "title=First")
        st = path.stat()
        _tag(mk_tag, path, "--set", "title=Second title", "--set", "album=An album")
        st2 = path.stat()
        assert (st2.st_ino, st2.st_size) == (st.st_ino, st.st_size), f"{name}: not rewritten in place"
        easy = _mutagen_easy(path)
        assert easy.get("title") == ["Second title"] and easy.get("album") == ["An album"], f"{name}: {easy}"
        _tag(mk_tag, path, "--set", "comment=" + "long comment " * 1600)
        st3 = path.stat()
        assert st3.st_ino != st2.st_ino and st3.st_size > st2.st_size, f"{name}: a 20 kB comment did not go through a new file"
        assert _ffprobe_tags(path).get("title") == "Second title"
        assert _audio_md5(path) == md5, f"{name}: the audio packets changed"


def test_mode_kept_and_no_temporary_left(mk_tag, shared_media, tmp_path):
    """A rewrite through a temporary file (a remux of an Ogg file, an MP3 written again) keeps
    the file's permission bits (and, run as root, its owner) and leaves nothing beside it; a
    stale temporary file of a dead process is removed by the next run."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    for name in (OGG, MP3_APIC):
        path = _source(name, shared_media, tmp_path)
        path.chmod(0o600)
        if os.geteuid() == 0:
            os.chown(path, 4321, 4321)
        stale = tmp_path / f".{path.name}.mktag-{dead.pid}{path.suffix}"
        stale.write_bytes(b"left by a killed run")
        ino = path.stat().st_ino
        _tag(mk_tag, path, "--set", "title=Mode")
        st = path.stat()
        assert st.st_ino != ino, f"{name}: not written through a new file"
        assert st.st_mode & 0o777 == 0o600, f"{name}: mode {oct(st.st_mode)}"
        if os.geteuid() == 0:
            assert (st.st_uid, st.st_gid) == (4321, 4321), f"{name}: owner {st.st_uid}:{st.st_gid}"
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [], f"{name}: a file was left"


def test_errors_leave_the_file_unchanged(mk_tag, shared_media, tmp_path):
    """A tag WAV's INFO list cannot hold, a cover into WAV, a picture that is no image, a
    setting without "=", a missing file: an error naming the problem, the file unchanged."""
    wav = _source("gen:wav", None, tmp_path)
    original = wav.read_bytes()
    not_image = tmp_path / "not-an-image.jpg"
    not_image.write_bytes(b"plain text, not a picture")
    for args, words in [(["--set", "album_artist=X"], "album_artist"), (["--cover", str(not_image)], "not a JPEG"),
                        (["--set", "title"], "KEY=VALUE")]:
        proc = lib.run([mk_tag, wav, *args])
        assert proc.returncode != 0, f"{args} succeeded"
        assert words in proc.stderr.decode(), proc.stderr.decode()
        assert wav.read_bytes() == original, f"{args} changed the file"
    jpeg = tmp_path / "c.jpg"
    jpeg.write_bytes(b"\xff\xd8\xff\xe0" + bytes(100))
    proc = lib.run([mk_tag, wav, "--cover", jpeg])
    assert proc.returncode != 0 and "cover" in proc.stderr.decode(), proc.stderr.decode()
    assert wav.read_bytes() == original
    proc = lib.run([mk_tag, tmp_path / "missing.mp3", "--set", "title=x"])
    assert proc.returncode != 0 and "missing.mp3" in proc.stderr.decode()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["gen.wav", "not-an-image.jpg", "c.jpg"])


@pytest.mark.parametrize("name,key", [(MP3_APIC, "artist"), (FLAC_TAGS, "artist"), (M4A, "artist")], ids=["mp3", "flac", "m4a"])
def test_a_tag_set_to_its_value_writes_nothing(name, key, mk_tag, shared_media, tmp_path):
    """A tag set to the value ffprobe reads from the file, with a key removed that the file does
    not have: mk-tag says nothing was written and the file is untouched (bytes, inode, mtime)."""
    path = _source(name, shared_media, tmp_path)
    value = {k.lower(): v for k, v in (_probe(path)["format"].get("tags") or {}).items()}.get(key)
    assert value, f"test input: ffprobe reads no {key} in {name}"
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    before, st = path.read_bytes(), path.stat()
    proc = _tag(mk_tag, path, "--set", f"{key}={value}", "--remove", "lyrics")
    assert "nothing written" in proc.stdout.decode() + proc.stderr.decode(), proc.stdout.decode()
    after = path.stat()
    assert path.read_bytes() == before and (after.st_ino, after.st_mtime_ns) == (st.st_ino, st.st_mtime_ns), "the file was written"
    # The same key set to another value is written.
    _tag(mk_tag, path, "--set", f"{key}={value} (2)")
    assert {k.lower(): v for k, v in (_probe(path)["format"].get("tags") or {}).items()}.get(key) == f"{value} (2)"


def test_listing_matches_ffprobe(mk_tag, shared_media):
    """`mk-tag FILE --json`'s ffmpeg_tags are ffprobe's format tags, its track_ffmpeg_tags the
    audio stream's."""
    for name in (MP3_APIC, FLAC_TAGS, M4A):
        path = shared_media / name
        proc = _tag(mk_tag, path, "--json")
        listing = json.loads(proc.stdout)
        info = _probe(path)
        assert dict(listing["ffmpeg_tags"]) == (info["format"].get("tags") or {}), f"{name}: format tags"
        audio = next(s for s in info["streams"] if s.get("codec_type") == "audio")
        shown = dict(listing["track_ffmpeg_tags"].get(str(audio["index"]), []))
        assert shown == (audio.get("tags") or {}), f"{name}: the audio stream's tags"
        text = _tag(mk_tag, path).stdout.decode()
        assert f"format: {listing['format']}" in text


def _id3_end(data: bytes) -> int:
    assert data[:3] == b"ID3"
    size = (data[6] << 21) | (data[7] << 14) | (data[8] << 7) | data[9]
    return 10 + size + (10 if data[5] & 0x10 else 0)


def _kill_when(cmd: list, temporary, at_least: int | None) -> bool:
    """Starts `cmd` and kills it (SIGKILL) at once (`at_least` None) or when the file it writes
    through (`temporary(pid)`) holds `at_least` bytes; True when that file was there at the kill."""
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    temp = temporary(proc.pid)
    deadline = time.monotonic() + 30
    while at_least is not None and proc.poll() is None and time.monotonic() < deadline:
        try:
            if temp.stat().st_size >= at_least:
                break
        except FileNotFoundError:
            pass
        time.sleep(0.0002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return temp.exists()


def test_sigkill_during_a_rewrite(mk_tag, shared_media, tmp_path):
    """mk-tag killed (SIGKILL) at several points of a rewrite through a temporary file of a
    64 MiB MP3 (before it starts, as the temporary file appears, a quarter, half and all of the
    audio copied): the file is the old one byte for byte, or a new one that mutagen and ffprobe
    read with the new comment and the old audio bytes; the run after removes what was left."""
    data = (shared_media / MP3_APIC).read_bytes()
    end = _id3_end(data)
    audio = data[end:]
    big = tmp_path / "big.mp3"
    with open(big, "wb") as f:
        f.write(data[:end])
        for _ in range((64 << 20) // len(audio)):
            f.write(audio)
    size = big.stat().st_size
    old = big.read_bytes()
    old_hash, audio_hash = hashlib.sha256(old).hexdigest(), hashlib.sha256(old[end:]).hexdigest()
    del old
    comment = "a comment that does not fit the old tag " * 200
    work = tmp_path / "work"
    work.mkdir()
    target = work / "big.mp3"
    cmd = [mk_tag, target, "--set", f"comment={comment}"]

    mid_write = 0
    for at_least in (None, 0, size // 4, size // 2, size):
        shutil.copyfile(big, target)
        mid_write += _kill_when(cmd, lambda pid: work / f".big.mp3.partial-{pid}", at_least)
        now = target.read_bytes()
        if hashlib.sha256(now).hexdigest() == old_hash:
            continue
        import mutagen.id3

        assert mutagen.id3.ID3(target).getall("COMM")[0].text == [comment], f"killed at {at_least}: a new tag without the comment"
        assert hashlib.sha256(now[_id3_end(now):]).hexdigest() == audio_hash, f"killed at {at_least}: the audio bytes changed"
        assert _ffprobe_tags(target).get("comment") == comment
    assert mid_write >= 2, f"only {mid_write} kills landed while the temporary file was written"
    _tag(mk_tag, target, "--set", "title=After the kills")
    assert [p.name for p in work.iterdir()] == [target.name], "a temporary file was left"
    assert hashlib.sha256(target.read_bytes()[_id3_end(target.read_bytes()):]).hexdigest() == audio_hash


def _top_level_boxes(path: Path) -> list[str]:
    data = path.read_bytes()
    names, at = [], 0
    while at + 8 <= len(data):
        size = int.from_bytes(data[at:at + 4], "big")
        if size == 1:
            size = int.from_bytes(data[at + 8:at + 16], "big")
        names.append(data[at + 4:at + 8].decode("latin-1"))
        if size < 8:
            break
        at += size
    return names


def test_mp4_keeps_its_moov_position(mk_tag, shared_media, tmp_path):
    """An MP4 with its moov before the media data (fast start) keeps it there through the remux
    a tag edit makes (one after keeps it after); every packet is the same (ffmpeg framemd5)."""
    for name, first in (("mp4_h264_aac_moov_at_start_ctts_8s.mp4", True), ("m4a_aac_8k_mono.m4a", False)):
        path = _source(name, shared_media, tmp_path)
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]
        before = lib.run(cmd)
        lib.oracle_ok(before, cmd)
        _tag(mk_tag, path, "--set", "title=Layout")
        boxes = _top_level_boxes(path)
        assert (boxes.index("moov") < boxes.index("mdat")) == first, f"{name}: top-level boxes {boxes}"
        after = lib.run(cmd)
        lib.oracle_ok(after, cmd)
        assert after.stdout == before.stdout, f"{name}: the packets changed"
        assert _ffprobe_tags(path).get("title") == "Layout"


# MP4 edited in place (MP4TagRewriter): real files with a free box after the moov (Apple's
# afconvert, an HE-AAC M4A) or padding inside moov/udta/meta with the moov last; an ffmpeg M4A
# with the moov last and no padding (the file grows by a free box holding the new moov); an
# ffmpeg fast-start M4A saved by mutagen, whose padding is a free box inside the meta (the moov
# keeps its size; the bytes that change lie in one page).
MP4_AFTER_FREE = "m4a_aac_mono_afconvert_apple_elst.mp4"   # ftyp, moov, free 3309, mdat
M4A_HEAAC_FREE = "m4a_heaac_v1_sbr_explicit_sync_ext_8k_core_16k_out.m4a"  # ftyp, moov, free 3195, mdat (iTunSMPB)
M4A_MOOV_LAST = "m4a_aac_8k_mono.m4a"                     # ftyp, free, mdat, moov; free in the meta (©ART, ©wrt, ©pub, tmpo ...)


def _mutagen_padded(tmp_path: Path) -> Path:
    """An ffmpeg fast-start M4A (moov, then mdat) that mutagen saved with an album: mutagen
    leaves a free box after the ilst, inside the meta."""
    import mutagen.mp4

    out = tmp_path / "mutagen_padded.m4a"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=d=2", "-c:a", "aac", "-movflags", "+faststart",
           "-metadata", "title=Before", "-metadata", "artist=An artist", "-metadata", "composer=A composer", out]
    lib.oracle_ok(lib.run(cmd), cmd)
    f = mutagen.mp4.MP4(out)
    f.tags["\xa9alb"] = ["Saved by mutagen"]
    f.save()
    data = out.read_bytes()
    assert b"free" in data[data.find(b"ilst"):data.find(b"mdat")], "test input: mutagen left no padding in the meta"
    return out


def _mp4_source(name: str, shared_media: Path | None, tmp_path: Path) -> Path:
    """A copy of a shared file, or "gen:mutagen" (above), or "gen:moov_last": an ffmpeg M4A in
    its default layout (mdat, then moov; no padding)."""
    if name == "gen:mutagen":
        return _mutagen_padded(tmp_path)
    if name == "gen:moov_last":
        out = tmp_path / "moov_last.m4a"
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=d=2", "-c:a", "aac",
               "-metadata", "title=Before", "-metadata", "composer=A composer", out]
        lib.oracle_ok(lib.run(cmd), cmd)
        return out
    return _source(name, shared_media, tmp_path)


def _packets(path: Path) -> bytes:
    """ffmpeg's framemd5 of the audio and video packets (not of a cover's attached picture)."""
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:a", "-map", "0:V?", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return proc.stdout


def _mutagen_mp4(path: Path) -> dict:
    """mutagen's MP4 items (covr as the pictures' bytes)."""
    import mutagen.mp4

    return {k: ([bytes(c) for c in v] if k == "covr" else list(v)) for k, v in (mutagen.mp4.MP4(path).tags or {}).items()}


# (file, the first edit grows the file, the second (a cover) and the third edit go in place).
# afconvert: the new moov goes after the old one, then (with the cover) into the old one's
# space before it; the third finds no room on either side (the moov with the cover is over
# half the free space) and is remuxed. HE-AAC: the cover leaves no room (remuxed: MediaKit's
# fast-start muxer leaves a free box after the moov, which the third edit fits). Moov last: the file grows for the cover (or the
# first edit), the next edit fits beside it. mutagen: the meta's padding takes the first edit,
# the cover is remuxed (MediaKit's fast-start muxer leaves a free box after the moov), and the
# third edit fits that.
@pytest.mark.parametrize("name,grows,second,third", [(MP4_AFTER_FREE, False, True, False), (M4A_HEAAC_FREE, False, False, True),
                                                     (M4A_MOOV_LAST, False, True, True), ("gen:moov_last", True, True, True),
                                                     ("gen:mutagen", False, False, True)],
                         ids=["afconvert_free_after_moov", "heaac_free_after_moov", "moov_last_meta_padding", "ffmpeg_moov_last",
                              "mutagen_meta_padding"])
def test_mp4_edited_in_place(name, grows, second, third, mk_tag, cover, tmp_path, request):
    """MP4 / M4A edits in place: the same inode; ffprobe and mutagen read the values set and
    not the key removed; mutagen's items not edited (those MediaKit does not write either:
    ©pub, tmpo, iTunSMPB) are the same; every packet is the same (ffmpeg framemd5); the size
    is the same unless the moov was last with no room. A second edit with a 2 kB cover and a
    third one go in place where there is room next to the moov, else through a remux; the
    readers see each edit, the cover is kept, the packets stay the same."""
    shared = None if name.startswith("gen:") else request.getfixturevalue("shared_media")
    path = _mp4_source(name, shared, tmp_path)
    st = path.stat()
    packets, items = _packets(path), _mutagen_mp4(path)
    removed = "composer" if "\xa9wrt" in items else None
    args = ["--set", f"title={TITLE}", "--set", "album_artist=Somebody Else"] + (["--remove", removed] if removed else [])
    proc = _tag(mk_tag, path, *args)
    assert "in place" in proc.stderr.decode(), proc.stderr.decode()
    after = path.stat()
    assert after.st_ino == st.st_ino, f"{name}: not written in place"
    assert (after.st_size > st.st_size) == grows, f"{name}: {st.st_size} bytes before, {after.st_size} after"
    tags = _ffprobe_tags(path)
    assert tags.get("title") == TITLE and tags.get("album_artist") == "Somebody Else", tags
    new_items = _mutagen_mp4(path)
    assert new_items.get("\xa9nam") == [TITLE] and new_items.get("aART") == ["Somebody Else"], new_items
    if removed:
        assert "composer" not in tags and "\xa9wrt" not in new_items, (tags, new_items)
    for k, v in items.items():
        if k not in ("\xa9nam", "aART", "\xa9wrt"):
            assert new_items.get(k) == v, f"{name}: item {k!r}: {v!r} before, {new_items.get(k)!r} after"
    assert _packets(path) == packets, f"{name}: the packets changed"

    proc = _tag(mk_tag, path, "--set", "title=Second", "--cover", str(cover))
    assert ("in place" in proc.stderr.decode()) == second, proc.stderr.decode()
    assert (path.stat().st_ino == st.st_ino) == second
    assert _mutagen_mp4(path).get("\xa9nam") == ["Second"]
    assert _cover_bytes(path) == cover.read_bytes(), "the first attached picture is not the cover given"
    ino = path.stat().st_ino
    proc = _tag(mk_tag, path, "--set", "title=Third", "--set", "album=An album")
    assert ("in place" in proc.stderr.decode()) == third and (path.stat().st_ino == ino) == third, proc.stderr.decode()
    final = _mutagen_mp4(path)
    assert final.get("\xa9nam") == ["Third"] and final.get("\xa9alb") == ["An album"], final
    assert final.get("covr") == [cover.read_bytes()], "the cover was lost"
    assert _packets(path) == packets, f"{name}: the packets changed"


def test_mp4_without_room_is_remuxed(mk_tag, shared_media, tmp_path):
    """A fast-start MP4 with no free box after its moov and no padding in it goes through a
    remux into a new file (another inode), as the message says."""
    path = _source("mp4_h264_aac_moov_at_start_ctts_8s.mp4", shared_media, tmp_path)
    ino = path.stat().st_ino
    proc = _tag(mk_tag, path, "--set", "title=Remuxed")
    assert "remuxed" in proc.stderr.decode() and path.stat().st_ino != ino, proc.stderr.decode()
    assert _ffprobe_tags(path).get("title") == "Remuxed"


def test_fragmented_mp4_stays_fragmented(mk_tag, shared_media, tmp_path):
    """A fragmented MP4 with no free box next to its moov is remuxed by a tag edit into a
    fragmented MP4 again (moof boxes, no sample tables in the moov), fragments about as long
    as the source's; every packet is the same (ffmpeg framemd5), ffprobe reads the new title."""
    path = _source("fmp4_h264_aac_single_file_2tracks.mp4", shared_media, tmp_path)
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]
    before = lib.run(cmd)
    lib.oracle_ok(before, cmd)
    fragments = _top_level_boxes(path).count("moof")
    assert fragments > 1, "test input: not a fragmented MP4"
    proc = _tag(mk_tag, path, "--set", "title=Fragmented")
    assert "remuxed" in proc.stderr.decode(), proc.stderr.decode()
    boxes = _top_level_boxes(path)
    assert boxes.count("moof") >= 1 and "moov" in boxes, f"not fragmented after the edit: {boxes}"
    assert abs(boxes.count("moof") - fragments) <= max(2, fragments // 2), f"{fragments} fragments before, {boxes.count('moof')} after"
    after = lib.run(cmd)
    lib.oracle_ok(after, cmd)
    assert after.stdout == before.stdout, "the packets changed"
    assert _ffprobe_tags(path).get("title") == "Fragmented"


def _stopped(pid: int) -> bool:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "T"


def _reads(mk_tag: Path, path: Path) -> tuple:
    """What the readers see: ffprobe's title, mutagen's ©nam, our listing's title, the packets."""
    ours = json.loads(_tag(mk_tag, path, "--json").stdout)
    return (_ffprobe_tags(path).get("title"), _mutagen_mp4(path).get("\xa9nam"),
            dict(ours["ffmpeg_tags"]).get("title"), _packets(path))


@pytest.mark.parametrize("name,step,committed", [("gen:moov_last", "mp4-grown", False), ("gen:moov_last", "mp4-written", False),
                                                 (MP4_AFTER_FREE, "mp4-written", False), (MP4_AFTER_FREE, "mp4-committed", True)],
                         ids=["moov_last-grown", "moov_last-written", "free_after-written", "free_after-committed"])
def test_mp4_sigkill_between_steps(name, step, committed, mk_tag, tmp_path, request):
    """mk-tag stopped (SIGSTOP, by MEDIAKIT_TEST_STOP_AT) between the steps of an MP4 edit in
    place, then killed (SIGKILL): before the commit write ffprobe, mutagen and MediaKit read
    the old title (the file grown by a zero box or a free box holding the new moov), after it
    the new one; the packets are the same; the next edit works and goes in place."""
    shared = None if name.startswith("gen:") else request.getfixturevalue("shared_media")
    path = _mp4_source(name, shared, tmp_path)
    old = _reads(mk_tag, path)
    env = dict(os.environ, MEDIAKIT_TEST_STOP_AT=step)
    proc = subprocess.Popen([str(mk_tag), str(path), "--set", "title=Killed edit"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not _stopped(proc.pid):
            assert proc.poll() is None and time.monotonic() < deadline, f"mk-tag did not stop at {step}"
            time.sleep(0.005)
        seen_stopped = _reads(mk_tag, path)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    seen_killed = _reads(mk_tag, path)
    want = ("Killed edit", ["Killed edit"], "Killed edit") if committed else old[:3]
    for seen, when in ((seen_stopped, "stopped"), (seen_killed, "killed")):
        assert seen[:3] == want, f"{step}, {when}: the readers see {seen[:3]}, expected {want}"
        assert seen[3] == old[3], f"{step}, {when}: the packets changed"
    ino = path.stat().st_ino
    proc2 = _tag(mk_tag, path, "--set", "title=After the kill")
    assert "in place" in proc2.stderr.decode() and path.stat().st_ino == ino, proc2.stderr.decode()
    assert _reads(mk_tag, path)[:3] == ("After the kill", ["After the kill"], "After the kill")


_UNMODELLED = ("GEOB", "POPM", "UFID", "PCNT", "WOAR", "WXXX", "MCDI", "USER", "OWNE")


@pytest.mark.parametrize("version", [3, 4])
def test_id3_keeps_the_frames_mediakit_does_not_read(version, mk_tag, shared_media, tmp_path):
    """An MP3 whose ID3v2.3 / 2.4 tag mutagen (an independent writer) gave GEOB, POPM, UFID,
    PCNT, URL, MCDI, USER and OWNE frames: after a title edit (a rewrite into an ID3v2.4 tag,
    in place or not), mutagen reads every one of them back equal, and the new title."""
    import mutagen.id3 as id3

    path = _source(MP3_V23, shared_media, tmp_path)
    tags = id3.ID3(path)
    tags.add(id3.GEOB(encoding=1, mime="application/x-test", filename="f.bin", desc="a geob", data=b"\x00\x01\xff\xfe GEOB"))
    tags.add(id3.POPM(email="someone@example.com", rating=196, count=7))
    tags.add(id3.UFID(owner="http://musicbrainz.org", data=b"0b4c4b5e-1d2a-4b6c-9d8e-7f6a5b4c3d2e"))
    tags.add(id3.PCNT(count=42))
    tags.add(id3.WOAR(url="http://example.com/artist"))
    tags.add(id3.WXXX(encoding=0, desc="shop", url="http://example.com/shop"))
    tags.add(id3.MCDI(data=bytes(range(0, 200, 3))))
    tags.add(id3.USER(encoding=0, lang="eng", text="terms of use"))
    tags.add(id3.OWNE(encoding=0, price="EUR1.00", date="20240101", seller="A shop"))
    tags.save(v2_version=version)

    def unmodelled() -> dict[str, str]:
        return {k: repr(v) for k, v in id3.ID3(path).items() if k[:4] in _UNMODELLED}

    before = unmodelled()
    assert len(before) == len(_UNMODELLED), f"test input: {sorted(before)}"
    _tag(mk_tag, path, "--set", "title=Edited title")
    after = id3.ID3(path)
    assert after.version[:2] == (2, 4) and after.getall("TIT2")[0].text == ["Edited title"]
    assert unmodelled() == before
