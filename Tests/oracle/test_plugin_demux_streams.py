"""Text, data and attachment streams from a plugin demuxer (issue 31 item 5; plugin ABI 2.5:
mk_plugin_track_info.tags / attachment, MK_DISPOSITION_ATTACHMENT), read through the FFmpeg
plugin's libavformat.

Oracles:
- ffprobe's streams of the same file: a Matroska attachment (codec_type attachment, tags
  filename / mimetype / title) is one of MediaKit's attachments with that name, type and
  description and the attached file's size (the file ffmpeg was given with -attach), and not a
  track; every other stream is a track, its tags ffprobe's; an attached picture, which
  libavformat reads as a cover stream, is a track and a cover whose bytes are the attached file;
- the same file read by MediaKit's own Matroska demuxer (the same input fed another way): the
  same files, names and types;
- a cover picture (the breadth corpus' Musepack with an APEv2 "Cover Art (Front)"): an
  attachment whose bytes are `ffmpeg -map 0:v -c copy`'s (mk-probe --cover-out), type front
  cover, and still a track (ffprobe lists its stream and its packet);
- a subtitle stream of a container only libavformat reads (ASS, made by ffmpeg from the breadth
  corpus' SubRip Matroska): a subtitle track of FFmpeg's codec name that mk-remux copies into
  Matroska with the packets of `ffmpeg -c copy` (framemd5) and the same events.
"""
from __future__ import annotations

import json
from pathlib import Path

import oracle_lib as lib

SUBRIP_MKV = "mkv_androidx_9d9030_full_blocks.mkv"
MPC = "mpc_Borewit_539382_apev2.sv7.mpc"
VTT = "vtt_shaka-proj_034a2c_chapters.vtt"


def _probe(mk_probe: Path, path: Path, *extra: str) -> dict:
    cmd = [mk_probe, "--json", *extra, path]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    return json.loads(proc.stdout)


def test_matroska_attachments_through_the_plugin(mk_probe: Path, shared_media: Path, tmp_path: Path) -> None:
    # Two real files attached: the breadth corpus' WebVTT file, and the Musepack's cover picture
    # as ffmpeg copies it out (libavformat reads a Matroska attachment of an image type as a
    # cover stream: ffprobe lists it as an mjpeg stream marked attached_pic).
    text = (shared_media / "breadth" / VTT).read_bytes()
    cover = lib.first_attached_picture(shared_media / "breadth" / MPC)
    assert cover
    (tmp_path / "notes.vtt").write_bytes(text)
    (tmp_path / "cover.jpg").write_bytes(cover)
    src = tmp_path / "att.mka"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=d=1", "-c:a", "libopus",
           "-metadata:s:a:0", "title=the tone", "-attach", tmp_path / "notes.vtt", "-metadata:s:t:0", "mimetype=text/vtt",
           "-metadata:s:t:0", "title=some notes", "-attach", tmp_path / "cover.jpg", "-metadata:s:t:1", "mimetype=image/jpeg", src]
    lib.oracle_ok(lib.run(cmd), cmd)
    streams = lib.ffprobe_metadata(src)["streams"]
    attached = [s for s in streams if s["codec_type"] == "attachment"]
    others = [s for s in streams if s["codec_type"] != "attachment"]
    assert len(attached) == 1 and [s["codec_name"] for s in others] == ["opus", "mjpeg"], streams
    assert others[1]["disposition"]["attached_pic"] == 1

    ours = _probe(mk_probe, src, "--demuxer", "ffmpeg:matroska")
    assert ours["format"]["demuxer"] == "ffmpeg:matroska,webm"
    assert [t["codec"] for t in ours["tracks"]] == [s["codec_name"] for s in others]
    for track, stream in zip(ours["tracks"], others):
        assert track["tags"] == stream.get("tags", {}), (track["tags"], stream.get("tags"))
    tags, pic = attached[0]["tags"], others[1]["tags"]
    got = [(a["file_name"], a["mime_type"], a["description"], a["size"], a["picture_type"]) for a in ours["attachments"]]
    assert got == [(tags["filename"], tags["mimetype"], tags["title"], len(text), -1),
                   (pic["filename"], pic["mimetype"], "", len(cover), 0)], got
    out = tmp_path / "out.jpg"
    cmd = [mk_probe, "--demuxer", "ffmpeg:matroska", "--cover-out", out, src]
    lib.check_ok(lib.run(cmd), cmd)
    assert out.read_bytes() == cover
    # MediaKit's own Matroska reader: the same files (the picture as a file, not as a cover).
    native = _probe(mk_probe, src)
    assert not native["format"]["demuxer"].startswith("ffmpeg:")
    assert [(a["file_name"], a["mime_type"], a["size"]) for a in native["attachments"]] == [(g[0], g[1], g[3]) for g in got]


def test_cover_picture_through_the_plugin(mk_probe: Path, shared_media: Path, tmp_path: Path) -> None:
    src = shared_media / "breadth" / MPC
    streams = lib.ffprobe_metadata(src)["streams"]
    ours = _probe(mk_probe, src)
    assert ours["format"]["demuxer"] == "ffmpeg:mpc"
    assert [t["codec"] for t in ours["tracks"]] == [s["codec_name"] for s in streams]
    cover = lib.first_attached_picture(src)
    assert cover
    pictures = [a for a in ours["attachments"] if a["picture_type"] >= 0]
    assert len(pictures) == 1 and pictures[0]["size"] == len(cover), ours["attachments"]
    assert (pictures[0]["mime_type"], pictures[0]["picture_type"]) == ("image/jpeg", 3)
    out = tmp_path / "cover.jpg"
    cmd = [mk_probe, "--cover-out", out, src]
    lib.check_ok(lib.run(cmd), cmd)
    assert out.read_bytes() == cover


def _framemd5(path: Path) -> list[str]:
    cmd = ["ffmpeg", "-v", "error", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return [l for l in proc.stdout.decode().splitlines() if not l.startswith("#software")]


def test_subtitle_track_from_the_plugin_remuxes_to_matroska(mk_bin: Path, mk_probe: Path, shared_media: Path,
                                                            tmp_path: Path) -> None:
    src = tmp_path / "subs.ass"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", shared_media / "breadth" / SUBRIP_MKV, "-c:s", "ass", src]
    lib.oracle_ok(lib.run(cmd), cmd)
    ours = _probe(mk_probe, src)
    assert ours["format"]["demuxer"] == "ffmpeg:ass"
    assert [(t["type"], t["codec"]) for t in ours["tracks"]] == [("subtitle", "ass")], ours["tracks"]
    out, ref = tmp_path / "ours.mkv", tmp_path / "ref.mkv"
    cmd = [mk_bin / "mk-remux", src, out]
    lib.check_ok(lib.run(cmd), cmd)
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-c", "copy", ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    assert _framemd5(out) == _framemd5(ref)
    events = []
    for f in (out, ref):
        cmd = ["ffmpeg", "-v", "error", "-i", f, "-f", "ass", "-"]
        proc = lib.run(cmd)
        lib.oracle_ok(proc, cmd)
        events.append([l for l in proc.stdout.decode().splitlines() if l.startswith("Dialogue:")])
    assert len(events[0]) == 3 and events[0] == events[1], events
