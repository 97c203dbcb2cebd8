"""Native FLAC files through FLACDemuxer.

Oracles: `ffprobe -show_entries packet=pos,size,pts,duration` on the audio stream (every
packet's offset, size, timestamp and duration equal: FFmpeg's flac parser splits the frames),
`ffmpeg -i FILE -f s16le -` (or s32le for 24-bit; FLAC decoding is lossless, so the PCM is
byte-identical), `ffprobe -show_entries format_tags` (the Vorbis comments) and the stream facts
ffprobe reports (sample rate, channels, bits, duration from STREAMINFO), on files ffmpeg's flac
encoder writes: 16 and 24 bit, 1, 2 and 6 channels, sample rates from 8 to 96 kHz (those the
frame header codes and those it stores in extra bytes), compression levels 0 and 8, with tags
and a cover picture, cut inside a frame (read as far as it goes, as ffmpeg does), and from a pipe.
"""
from __future__ import annotations

import json
import subprocess

import pytest

import oracle_lib as lib

# (channels, sample rate, bits, compression level)
CASES = [(2, 44100, 16, 0), (2, 44100, 16, 8), (1, 8000, 16, 5), (6, 48000, 16, 5), (2, 96000, 24, 8),
         (1, 22050, 24, 0), (2, 11025, 16, 5), (2, 32000, 24, 5), (1, 37800, 16, 5), (2, 192000, 16, 2)]


def _make(tmp_path, channels: int, rate: int, bits: int, level: int, seconds: float = 2.3, extra: list | None = None,
          name: str | None = None):
    path = tmp_path / (name or f"{channels}ch_{rate}_{bits}_{level}.flac")
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi",
           "-i", f"sine=frequency=440:beep_factor=3:duration={seconds}:sample_rate={rate}",
           *(extra or []), "-ac", str(channels), "-c:a", "flac", "-compression_level", str(level),
           *(["-sample_fmt", "s32"] if bits == 24 else []), path]
    lib.oracle_ok(lib.run(cmd), cmd)
    return path


def _lines(cmd: list, stdin=None) -> list[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, stdin=stdin, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    return [l for l in proc.stdout.decode().splitlines() if l.strip()]


def _ffprobe_packets(path) -> list[str]:
    # ffprobe's CSV order: pts, duration, size, pos; as "pos,size,pts,duration".
    rows = _lines(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pts,duration,size,pos",
                   "-of", "csv=p=0", path])
    return [",".join(r.split(",")[i] for i in (3, 2, 0, 1)) for r in rows]


def _our_packets(mk_probe, path, stdin=None) -> list[str]:
    # mk-probe: track,pts,dts,duration,size,offset,flags
    return [",".join(l.split(",")[i] for i in (5, 4, 1, 3)) for l in _lines([mk_probe, "--packets", path], stdin=stdin)]


def _compare(path, mk_probe, mk_decode, tmp_path, bits: int = 16, intact: bool = True):
    ours, ref = _our_packets(mk_probe, path), _ffprobe_packets(path)
    assert ours == ref, lib.diff_lines(ours, ref, "mk-probe", "ffprobe")
    if intact:   # every frame's CRC-16 confirmed: no warning
        proc = lib.run([mk_probe, "--packets", path])
        assert b"warning" not in proc.stderr, proc.stderr.decode()
    fmt = "s32" if bits == 24 else "s16"
    out = tmp_path / "out.pcm"
    lib.check_ok(lib.run([mk_decode, path, "--audio-out", out, "--sample-format", fmt, "-q"]), [mk_decode, path])
    want = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-f", f"{fmt}le", "-"], capture_output=True).stdout
    got = out.read_bytes()
    assert len(got) == len(want) and got == want, f"{len(got)} bytes decoded, ffmpeg {len(want)}"


def _stream_facts(path) -> dict:
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
                          "stream=sample_rate,channels,duration_ts,bits_per_raw_sample:format=duration", "-of", "json", str(path)],
                         capture_output=True, check=True).stdout
    return json.loads(out)


@pytest.mark.parametrize("channels,rate,bits,level", CASES, ids=[f"{c}ch-{r}-{b}bit-l{l}" for c, r, b, l in CASES])
def test_flac_like_ffmpeg(channels, rate, bits, level, mk_probe, mk_decode, tmp_path):
    path = _make(tmp_path, channels, rate, bits, level)
    _compare(path, mk_probe, mk_decode, tmp_path, bits)
    ref = _stream_facts(path)
    stream = ref["streams"][0]
    ours = json.loads(subprocess.run([str(mk_probe), "--json", str(path)], capture_output=True, check=True).stdout)
    track = ours["tracks"][0]
    assert (track["codec"], track["sample_rate"], track["channels"], track["duration_ts"]) == \
        ("flac", int(stream["sample_rate"]), stream["channels"], stream["duration_ts"])
    assert int(stream["bits_per_raw_sample"]) == bits
    assert abs(ours["format"]["duration"] - float(ref["format"]["duration"])) < 1e-6


def test_flac_tags_and_cover(mk_probe, mk_decode, tmp_path):
    cover = tmp_path / "cover.png"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=size=96x64:duration=0.04", "-frames:v", "1", cover]
    lib.oracle_ok(lib.run(cmd), cmd)
    tags = {"title": "Tïtle with ünïcode", "artist": "Someone", "album": "An album", "album_artist": "Various",
            "track": "3/12", "disc": "1", "date": "2020", "genre": "Rock", "comment": "a comment = with equals", "CustomKey": "value"}
    extra = ["-i", str(cover), "-map", "0:a", "-map", "1:v", "-c:v", "copy", "-disposition:v", "attached_pic"]
    for k, v in tags.items():
        extra += ["-metadata", f"{k}={v}"]
    path = _make(tmp_path, 2, 44100, 16, 8, extra=extra, name="tagged.flac")
    _compare(path, mk_probe, mk_decode, tmp_path)
    want = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format_tags", "-of", "json", str(path)],
                                     capture_output=True, check=True).stdout)["format"]["tags"]
    ours = json.loads(subprocess.run([str(mk_probe), "--json", str(path)], capture_output=True, check=True).stdout)["format"]
    assert ours["tags"] == want
    # The picture: one PICTURE block holding the PNG's bytes, as ffmpeg lists its attached picture.
    pic = json.loads(subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                                     "stream=codec_name,width,height:packet=size", "-of", "json", str(path)],
                                    capture_output=True, check=True).stdout)
    assert [(p["mime_type"], p["width"], p["height"], p["size"]) for p in ours["pictures"]] == \
        [("image/png", pic["streams"][0]["width"], pic["streams"][0]["height"], int(pic["packets"][0]["size"]))]
    assert ours["pictures"][0]["size"] == cover.stat().st_size


def test_flac_cut_inside_a_frame(mk_probe, mk_decode, tmp_path):
    full = _make(tmp_path, 2, 44100, 16, 5)
    cut = tmp_path / "cut.flac"
    data = full.read_bytes()
    cut.write_bytes(data[:len(data) * 2 // 3])
    _compare(cut, mk_probe, mk_decode, tmp_path, intact=False)
    proc = lib.run([mk_probe, "--packets", cut])
    assert b"ends inside a frame" in proc.stderr, proc.stderr


def test_flac_damaged_frame_in_the_middle(mk_probe, mk_decode, tmp_path):
    # A byte changed inside a frame: its CRC-16 fails, it still ends at the next header (as in
    # FFmpeg's parser), and the damage is a warning naming the frame's offset.
    path = _make(tmp_path, 2, 44100, 16, 5)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x55
    path.write_bytes(bytes(data))
    ours, ref = _our_packets(mk_probe, path), _ffprobe_packets(path)
    assert ours == ref, lib.diff_lines(ours, ref, "mk-probe", "ffprobe")
    proc = lib.run([mk_probe, "--packets", path])
    assert b"CRC-16 does not match" in proc.stderr, proc.stderr


def test_flac_from_a_pipe(mk_probe, tmp_path):
    path = _make(tmp_path, 6, 48000, 24, 8)
    with open(path, "rb") as f:
        piped = _our_packets(mk_probe, "-", stdin=f)
    assert piped == _ffprobe_packets(path)


def test_flac_written_to_a_pipe(mk_probe, mk_decode, tmp_path):
    # ffmpeg writing to a pipe cannot go back to fill in STREAMINFO's sample count and frame sizes.
    path = tmp_path / "piped.flac"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-f", "lavfi", "-i", "sine=duration=1.7", "-c:a", "flac", "-f", "flac", "-"]
    proc = subprocess.run(cmd, capture_output=True)
    lib.oracle_ok(proc, cmd)
    path.write_bytes(proc.stdout)
    _compare(path, mk_probe, mk_decode, tmp_path)


def test_flac_with_id3v2_before_it(mk_probe, mk_decode, tmp_path):
    flac = _make(tmp_path, 2, 44100, 16, 5)
    body = b"TIT2" + (13).to_bytes(4, "big") + b"\0\0" + b"\x03ID3 in front"
    tag = b"ID3\x04\x00\x00" + bytes([0, 0, 0, len(body)]) + body
    path = tmp_path / "id3.flac"
    path.write_bytes(tag + flac.read_bytes())
    _compare(path, mk_probe, mk_decode, tmp_path)


def test_flac_bad_blocks_are_named(mk_probe, tmp_path):
    good = _make(tmp_path, 2, 44100, 16, 5).read_bytes()
    # STREAMINFO claiming more bytes than the file has.
    bad = tmp_path / "bad.flac"
    bad.write_bytes(b"fLaC\x80\xff\xff\xff" + good[8:100])
    proc = lib.run([mk_probe, bad])
    assert proc.returncode != 0 and b"STREAMINFO block says 16777215 bytes" in proc.stderr, proc.stderr
    # A first block that is not STREAMINFO.
    bad.write_bytes(b"fLaC\x04\x00\x00\x08" + bytes(8) + good[4:])
    proc = lib.run([mk_probe, bad])
    assert proc.returncode != 0 and b"STREAMINFO must come first" in proc.stderr, proc.stderr
    # Only the signature.
    bad.write_bytes(b"fLaC")
    proc = lib.run([mk_probe, bad])
    assert proc.returncode != 0 and b"offset 4" in proc.stderr, proc.stderr


def _reference_encode(tmp_path, wav, name: str, options: list):
    """FLAC from libFLAC's own encoder (the `flac` tool of scripts/deps.sh)."""
    path = tmp_path / name
    cmd = ["flac", "-s", "-f", *options, "-o", path, wav]
    lib.oracle_ok(lib.run(cmd), cmd)
    return path


def _wav(tmp_path, source: list, channels: int, codec: str = "pcm_s16le", name: str = "in.wav"):
    path = tmp_path / name
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", *source, "-ac", str(channels), "-c:a", codec, "-rf64", "never", path]
    lib.oracle_ok(lib.run(cmd), cmd)
    return path


REFERENCE = [("l8", ["-8"], 2, "pcm_s16le"), ("l0-1152", ["-0", "--blocksize=1152"], 2, "pcm_s16le"),
             ("nopad-noseek", ["-5", "--no-padding", "--no-seektable"], 1, "pcm_s16le"), ("24bit", ["-8"], 2, "pcm_s24le"),
             ("6ch-blocksize-576", ["-5", "--blocksize=576"], 6, "pcm_s16le")]


@pytest.mark.parametrize("name,options,channels,codec", REFERENCE, ids=[r[0] for r in REFERENCE])
def test_flac_from_the_reference_encoder(name, options, channels, codec, mk_probe, mk_decode, tmp_path):
    wav = _wav(tmp_path, ["-f", "lavfi", "-i", "sine=frequency=300:beep_factor=2:duration=4.1:sample_rate=48000"], channels, codec)
    path = _reference_encode(tmp_path, wav, f"{name}.flac", options)
    _compare(path, mk_probe, mk_decode, tmp_path, 24 if codec == "pcm_s24le" else 16)


def test_flac_vorbis_comments_as_ffmpeg_lists_them(mk_probe, tmp_path):
    # Repeated keys in other cases, FFmpeg's renamed keys, an empty value, OGM chapters.
    wav = _wav(tmp_path, ["-f", "lavfi", "-i", "sine=duration=1"], 1)
    path = _reference_encode(tmp_path, wav, "comments.flac", ["-5"])
    fields = ["ARTIST=One", "artist=Two", "TRACKNUMBER=4", "Album=X", "NOVALUE=", "DESCRIPTION=desc", "COMMENT=cmt",
              "tracknumber=5", "ALBUMARTIST=aa", "DiscNumber=2", "CHAPTER001=00:00:00.000", "CHAPTER001NAME=Intro",
              "CHAPTER002NAME=no such chapter", "Title=Ünïcode ☃", "ARTIST=Three"]
    cmd = ["metaflac", *[f"--set-tag={f}" for f in fields], path]
    lib.oracle_ok(lib.run(cmd), cmd)
    want = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format_tags", "-of", "json", str(path)],
                                     capture_output=True, check=True).stdout)["format"]["tags"]
    ours = json.loads(subprocess.run([str(mk_probe), "--json", str(path)], capture_output=True, check=True).stdout)["format"]
    assert ours["tags"] == want


def _corpus_audio(shared_media) -> list:
    """Decodable audio in the shared corpus (MANIFEST.tsv), the broken_* files left out."""
    rows = [l.split("\t") for l in (shared_media / "MANIFEST.tsv").read_text().splitlines()[1:]]
    names = [r[0] for r in rows if len(r) > 5 and "codec_type=audio" in r[5] and not r[0].startswith("broken_")]
    return [shared_media / n for n in names if (shared_media / n).is_file()]


def test_flac_corpus(mk_probe, mk_decode, shared_media, tmp_path):
    """Every .flac file in the corpus, and real recordings from it re-encoded to FLAC by both
    encoders (the corpus holds no .flac file of its own today)."""
    files = sorted(shared_media.rglob("*.flac"))
    for path in files:
        _compare(path, mk_probe, mk_decode, tmp_path)
    made = 0
    for i, src in enumerate(sorted(_corpus_audio(shared_media), key=lambda p: -p.stat().st_size)[:6]):
        wav = _wav(tmp_path, ["-i", str(src), "-map", "0:a:0", "-t", "60"], 2, name=f"c{i}.wav")
        for tool in ("ffmpeg", "flac"):
            out = tmp_path / f"c{i}_{tool}.flac"
            if tool == "flac":
                out = _reference_encode(tmp_path, wav, out.name, ["-5"])
            else:
                cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", wav, "-c:a", "flac", out]
                lib.oracle_ok(lib.run(cmd), cmd)
            _compare(out, mk_probe, mk_decode, tmp_path)
            made += 1
    assert files or made, "no .flac file and no decodable audio in the corpus"


def test_flac_in_mp4_decodes_like_ffmpeg(mk_decode, tmp_path):
    """FLAC in MP4 (`dfLa`): the decoder gets STREAMINFO's 34 bytes, as FFmpeg's mov demuxer
    reads them; the samples equal ffmpeg's decode byte for byte."""
    path = tmp_path / "flac.mp4"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=2",
           "-c:a", "flac", "-strict", "-2", path]
    lib.oracle_ok(lib.run(cmd), cmd)
    out = tmp_path / "out.pcm"
    lib.check_ok(lib.run([mk_decode, path, "--audio-out", out, "-q"]), [mk_decode, path])
    ref = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-f", "s16le", "-"], capture_output=True).stdout
    assert out.read_bytes() == ref


@pytest.mark.parametrize("sample_fmt", ["s16", "s32"])
def test_flac_remux_into_mp4(sample_fmt, mk_bin, mk_decode, tmp_path):
    """`mk-remux in.flac out.mp4` (fLaC + dfLa): ffmpeg decodes our MP4 to the samples it decodes
    from the FLAC file, and so does mk-decode."""
    src = tmp_path / "in.flac"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=3:sample_rate=48000",
           "-ac", "2", "-sample_fmt", sample_fmt, "-c:a", "flac", src]
    lib.oracle_ok(lib.run(cmd), cmd)
    out = tmp_path / "out.mp4"
    lib.check_ok(lib.run([mk_bin / "mk-remux", src, out]), [mk_bin / "mk-remux", src, out])
    fmt = "s32le" if sample_fmt == "s32" else "s16le"

    def pcm(p):
        return subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(p), "-f", fmt, "-"], capture_output=True).stdout
    assert pcm(out) == pcm(src)
    ours = tmp_path / "ours.pcm"
    lib.check_ok(lib.run([mk_decode, out, "--audio-out", ours, "-q"]), [mk_decode, out])
    assert ours.read_bytes() == subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(src), "-f", "s16le", "-"],
                                               capture_output=True).stdout
