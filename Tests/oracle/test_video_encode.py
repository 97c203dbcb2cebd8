"""Video encoding through the plugin ABI (issue 36) against FFmpeg 5.1's own encode.

Input: 2 s of testsrc2, 320x240 at 25 fps, coded by libx264 with B-frames (-bf 2, -g 25) and a
mono AAC track, as ORACLES.md makes test media.

  libx264, deterministic    mk-transcode SRC out.mp4 --video-codec libx264 --preset veryfast
                            --crf 28 --threads 1 against
                            ffmpeg -i SRC -an -c:v libx264 -preset veryfast -crf 28 -threads 1:
                            the video packets of both MP4s byte-identical (size and MD5 of each
                            packet of `ffmpeg -c copy -f framemd5`), the same timestamps in
                            seconds, the same magic cookie (ffprobe's extradata hash), hence the
                            same x264 SEI options string
  edit list                 ffprobe start_time of our video stream is 0 (the B-frame delay is
                            cut by the edit list) and ffmpeg decodes every frame of it: the
                            frame count and the presentation times equal the source's
  other encoders            libx265 and libvpx-vp9 at -threads 1: packets byte-identical to
                            ffmpeg's with the same settings (the MP4 built the hvcC / vpcC);
                            libsvtav1 (not promised deterministic): PSNR against the source
                            within 0.1 dB of ffmpeg's encode (`-lavfi psnr`), the av1C (built
                            around the encoder's sequence header) equal, every frame decoded
                            (libaom-av1 matches too by hand but takes a minute: not run here)
  codec name                --video-codec h264 picks libx264 (what `ffmpeg -c:v h264` picks)
  real files                H.264 and HEVC MP4s of ../shared/media written by other tools (an
                            edit list, a video track starting after the audio): the packets of
                            ffmpeg's encode with `-fps_mode passthrough` (mk-transcode codes
                            the decoded pictures as they are; ffmpeg's default CFR mode for MP4
                            would duplicate the first picture to fill a late start), and the
                            decoded frames' count and times those of the source
Errors: an encoder option the encoder does not have (--crf for mpeg4) is an error naming it,
and nothing is left under the target name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import oracle_lib as lib

X264 = ["--preset", "veryfast", "--crf", "28", "--threads", "1"]
FF_X264 = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "28", "-threads", "1"]


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("videnc") / "src.mp4"
    cmd = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-f", "lavfi",
           "-i", "sine=f=440:sample_rate=44100", "-t", "2", "-c:v", "libx264", "-bf", "2", "-g", "25",
           "-c:a", "aac", "-ac", "1", "-shortest", out]
    lib.oracle_ok(lib.run(cmd), cmd)
    return out


@pytest.fixture(scope="module")
def x264_pair(source: Path, mk_transcode: Path) -> tuple[Path, Path]:
    """(ours, ffmpeg's) libx264 encodes of the source with the same settings."""
    ours, ref = source.parent / "ours.mp4", source.parent / "ref.mp4"
    cmd = [mk_transcode, source, ours, "--quiet", "--video-codec", "libx264", *X264]
    lib.check_ok(lib.run(cmd), cmd)
    cmd = ["ffmpeg", "-v", "error", "-y", "-i", source, "-an", *FF_X264, ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    return ours, ref


def video_packets(path: Path) -> list[tuple[float, float, int, str]]:
    """(dts s, pts s, size, md5) of each packet of the first video stream, in file order."""
    cmd = ["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    text = proc.stdout.decode() if isinstance(proc.stdout, bytes) else proc.stdout
    tb = None
    out = []
    for line in text.splitlines():
        if line.startswith("#tb 0:"):
            num, den = line.split(":", 1)[1].strip().split("/")
            tb = int(num) / int(den)
        if line.startswith("#") or not line.strip():
            continue
        _, dts, pts, _, size, md5 = [f.strip() for f in line.split(",")]
        assert tb is not None
        out.append((round(int(dts) * tb, 6), round(int(pts) * tb, 6), int(size), md5))
    return out


def video_stream(path: Path) -> dict:
    cmd = ["ffprobe", "-v", "error", "-show_data_hash", "md5", "-select_streams", "v:0", "-show_entries",
           "stream=codec_name,width,height,start_time,extradata_hash,r_frame_rate,pix_fmt", "-of", "json", path]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return json.loads(proc.stdout)["streams"][0]


def decoded_frames(path: Path) -> list[str]:
    """The presentation times ffmpeg decodes from PATH's first video stream, one per frame."""
    cmd = ["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd, who="ffmpeg decoding our file")
    err = proc.stderr.decode() if isinstance(proc.stderr, bytes) else proc.stderr
    assert not err.strip(), f"ffmpeg reported errors decoding {path.name}:\n{lib.tail(err)}"
    text = proc.stdout.decode() if isinstance(proc.stdout, bytes) else proc.stdout
    tb = next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("#tb 0:"))
    num, den = (int(x) for x in tb.split("/"))
    return [f"{int(line.split(',')[2]) * num / den:.4f}" for line in text.splitlines()
            if line.strip() and not line.startswith("#")]


def test_libx264_packets_are_ffmpegs(x264_pair):
    ours, ref = x264_pair
    a, b = video_packets(ours), video_packets(ref)
    assert len(a) == len(b) == 50, f"{len(a)} packets, ffmpeg {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        assert x[2:] == y[2:], f"packet {i}: size/md5 {x[2:]} against ffmpeg's {y[2:]}"
        assert x[:2] == y[:2], f"packet {i}: dts/pts {x[:2]} s against ffmpeg's {y[:2]} s"
    sa, sb = video_stream(ours), video_stream(ref)
    assert sa["extradata_hash"] == sb["extradata_hash"], "the avcC (SPS/PPS) differs from ffmpeg's"
    for key in ("codec_name", "width", "height", "pix_fmt", "r_frame_rate"):
        assert sa[key] == sb[key], f"{key}: {sa[key]} against ffmpeg's {sb[key]}"


def test_edit_list_starts_at_zero_and_every_frame_decodes(x264_pair, source):
    ours, ref = x264_pair
    assert float(video_stream(ours)["start_time"]) == 0.0
    assert float(video_stream(ref)["start_time"]) == 0.0
    assert decoded_frames(ours) == decoded_frames(source)


# encoder: (mk-transcode settings, ffmpeg's, byte-identical or PSNR within 0.1 dB)
OTHERS = {
    "libx265": (["--preset", "ultrafast", "--crf", "30"], ["-preset", "ultrafast", "-crf", "30"], True),
    "libvpx-vp9": (["--crf", "40"], ["-crf", "40"], True),
    "libsvtav1": (["--preset", "8", "--crf", "35"], ["-preset", "8", "-crf", "35"], False),
}


def psnr(path: Path, source: Path) -> float:
    """ffmpeg's average PSNR of PATH's pictures against SOURCE's."""
    cmd = ["ffmpeg", "-hide_banner", "-i", path, "-i", source, "-lavfi", "[0:v][1:v]psnr", "-f", "null", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    err = proc.stderr.decode() if isinstance(proc.stderr, bytes) else proc.stderr
    return float(err.rsplit("average:", 1)[1].split()[0])


@pytest.mark.parametrize("encoder", list(OTHERS))
def test_other_encoders_match_ffmpeg(encoder, source, mk_transcode, tmp_path):
    ours_args, ff_args, identical = OTHERS[encoder]
    ours, ref = tmp_path / "ours.mp4", tmp_path / "ref.mp4"
    cmd = [mk_transcode, source, ours, "--quiet", "--video-codec", encoder, "--threads", "1", *ours_args]
    lib.check_ok(lib.run(cmd), cmd)
    cmd = ["ffmpeg", "-v", "error", "-y", "-i", source, "-an", "-c:v", encoder, "-threads", "1", *ff_args, ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    # (ffprobe states no extradata for VP9 in MP4: the vpcC is checked by the decode below)
    assert video_stream(ours).get("extradata_hash") == video_stream(ref).get("extradata_hash")
    if identical:
        assert [x[2:] for x in video_packets(ours)] == [y[2:] for y in video_packets(ref)]
    else:
        a, b = psnr(ours, source), psnr(ref, source)
        assert abs(a - b) <= 0.1, f"PSNR {a:.3f} dB, ffmpeg's encode {b:.3f} dB"
    assert decoded_frames(ours) == decoded_frames(source)


REAL = ["mp4_h264_aac_moov_at_start_ctts_8s.mp4", "mp4_hevc_hvc1_aac_ctts_elst.mp4", "mp4_h264_1080p_ctts_elst_1s.mp4"]


@pytest.mark.parametrize("name", REAL)
def test_real_files_encode_as_ffmpeg_does(name, shared_media, mk_transcode, tmp_path):
    src = shared_media / name
    ours, ref = tmp_path / "ours.mp4", tmp_path / "ref.mp4"
    cmd = [mk_transcode, src, ours, "--quiet", "--video-codec", "libx264", "--preset", "ultrafast", "--crf", "30",
           "--threads", "1"]
    lib.check_ok(lib.run(cmd), cmd)
    cmd = ["ffmpeg", "-v", "error", "-y", "-i", src, "-an", "-fps_mode", "passthrough", "-c:v", "libx264",
           "-preset", "ultrafast", "-crf", "30", "-threads", "1", ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    a, b = video_packets(ours), video_packets(ref)
    assert [x[2:] for x in a] == [y[2:] for y in b], "the packets differ from ffmpeg's"
    assert video_stream(ours)["extradata_hash"] == video_stream(ref)["extradata_hash"]
    assert decoded_frames(ours) == decoded_frames(src)


def test_codec_name_picks_ffmpegs_encoder(source, mk_transcode, tmp_path):
    out = tmp_path / "h264.mp4"
    cmd = [mk_transcode, source, out, "--video-codec", "h264", *X264]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    text = proc.stdout.decode() if isinstance(proc.stdout, bytes) else proc.stdout
    assert "video libx264, 50 pictures" in text, text
    assert video_stream(out)["codec_name"] == "h264"


def test_an_option_the_encoder_lacks_is_named(source, mk_transcode, tmp_path):
    out = tmp_path / "mpeg4.mp4"
    cmd = [mk_transcode, source, out, "--video-codec", "mpeg4", "--crf", "20"]
    proc = lib.run(cmd)
    assert proc.returncode != 0
    err = proc.stderr.decode() if isinstance(proc.stderr, bytes) else proc.stderr
    assert "mpeg4" in err and "no option 'crf'" in err, err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == []
