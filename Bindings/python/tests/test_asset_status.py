"""Reader and writer status (issue 35, item 10), as AVAssetReader / AVAssetWriter say it:
Demuxer.status / error / track_ended / cancel and Muxer.status / error / end_track /
track_ended. Oracles: the packets read per track to their end are ffprobe -count_packets's; the
file written with a track marked finished holds, as ffprobe counts, the packets written."""
import io
import subprocess
from pathlib import Path
from typing import BinaryIO, cast

import pytest

import mediakit

FILE = "mp4_h264_aac_moov_at_start_ctts_8s.mp4"


def ffprobe_counts(path: Path) -> list[int]:
    proc = subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets",
                           "-of", "csv=p=0", str(path)], capture_output=True, check=True)
    return [int(x) for x in proc.stdout.decode().split()]


def test_demuxer_status_per_track_end_and_cancel(shared_media: Path) -> None:
    path = shared_media / FILE
    with mediakit.open(path) as d:
        assert d.status == "unknown" and d.error is None
        counts = []
        for t in d.tracks:
            counts.append(sum(1 for _ in iter(lambda: d.read_track(t.index), None)))
            assert d.track_ended(t.index)
            if t.index == 0:
                assert not d.track_ended(1) and d.status == "reading"
        assert counts == ffprobe_counts(path)
        assert d.status == "completed"
        d.seek(0)
        assert d.status == "reading" and not d.track_ended(0)
    with mediakit.open(path) as d:
        assert d.read() is not None
        d.cancel()
        assert d.status == "cancelled" and d.read() is None


def test_a_cut_file_completes_and_an_io_error_fails(shared_media: Path) -> None:
    with pytest.warns(mediakit.TruncatedWarning):
        with mediakit.open(shared_media / "ogg_opus_stereo_truncated_10000b_no_eos.opus") as d:
            n = sum(1 for _ in iter(d.read, None))
            assert n > 40 and d.status == "completed" and d.error is None

    data = (shared_media / FILE).read_bytes()

    class Flaky(io.RawIOBase):
        """The file's bytes, then an I/O error past half once armed (after the demuxer opened)."""

        def __init__(self) -> None:
            self.pos, self.armed = 0, False

        def readable(self) -> bool:
            return True

        def seekable(self) -> bool:
            return True

        def seek(self, offset: int, whence: int = 0) -> int:
            self.pos = offset if whence == 0 else self.pos + offset if whence == 1 else len(data) + offset
            return self.pos

        def tell(self) -> int:
            return self.pos

        def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
            if self.armed and self.pos > len(data) // 2:
                raise OSError("the disk went away")
            n = min(len(b), len(data) - self.pos)
            b[:n] = data[self.pos:self.pos + n]
            self.pos += n
            return n

    source = Flaky()
    with mediakit.open(cast(BinaryIO, source)) as d:
        source.armed = True
        with pytest.raises(mediakit.MediaIOError):
            while d.read() is not None:
                pass
        assert d.status == "failed"
        assert isinstance(d.error, mediakit.MediaIOError) and "read" in d.error.message


def test_muxer_status_and_a_finished_track(shared_media: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.mkv"
    written = [0, 0]
    refused = 0
    with mediakit.open(shared_media / FILE) as d:
        m = mediakit.Muxer(out)
        for t in d.tracks:
            m.add_track(t)
        assert m.status == "unknown"
        for p in d.packets():
            if p.track == 1 and written[1] == 20:
                m.end_track(1)
            if m.track_ended(p.track):
                with pytest.raises(mediakit.StateError):
                    m.write(p.track, p)
                refused += 1
                continue
            m.write(p.track, p)
            written[p.track] += 1
            assert m.status == "writing"
        assert refused > 0 and not m.track_ended(0)
        m.finish()
        assert m.status == "completed" and m.track_ended(0) and m.error is None
        m.close()
    assert ffprobe_counts(out) == written
    c = mediakit.Muxer(tmp_path / "cancelled.mkv")
    c.cancel()
    assert c.status == "cancelled"
    c.close()


def test_writer_status_and_a_finished_track(tmp_path: Path) -> None:
    """mediakit.Writer (AssetWriter): unknown -> writing -> completed; the audio track marked
    finished refuses samples; the file holds what was written (ffprobe: FLAC, 30000 samples);
    finishing a track given nothing fails the writer, with the error kept."""
    import numpy as np
    out = tmp_path / "w.mka"
    w = mediakit.Writer(out, audio=dict(codec="flac", sample_rate=48000, channels=2, format="s16"))
    assert w.status == "unknown"
    pcm = (np.random.default_rng(5).standard_normal((30000, 2)) * 3000).astype("<i2")
    w.write_audio(pcm)
    assert w.status == "writing"
    w.mark_finished("audio")
    with pytest.raises(mediakit.StateError):
        w.write_audio(pcm[:100])
    w.finish()
    assert w.status == "completed" and w.error is None
    w.close()
    proc = subprocess.run(["ffmpeg", "-v", "error", "-i", str(out), "-f", "s16le", "-"], capture_output=True, check=True)
    assert proc.stdout == pcm.tobytes()

    empty = mediakit.Writer(tmp_path / "e.mka", audio=dict(codec="flac", sample_rate=48000, channels=2))
    with pytest.raises(mediakit.StateError):
        empty.finish()
    assert empty.status == "failed" and isinstance(empty.error, mediakit.StateError)
    assert not (tmp_path / "e.mka").exists()
    empty.close()
