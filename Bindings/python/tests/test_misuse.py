"""Misuse raises (MediaError, TypeError or ValueError), never crashes; closed objects
raise; a view that outlives its frame keeps the memory alive."""
import gc
import os
from pathlib import Path

import numpy as np
import pytest

import mediakit


def first_frame(path: Path) -> tuple[mediakit.Demuxer, mediakit.DecodeSession, mediakit.Frame]:
    d = mediakit.open(path)
    v = d.tracks[0]
    dec = mediakit.DecodeSession(v)
    for p in d.packets(v):
        f = next(dec.decode(p), None)
        if f is not None:
            return d, dec, f
    return d, dec, next(dec.flush())


def test_missing_file() -> None:
    with pytest.raises(mediakit.MediaError) as e:
        mediakit.open("/nonexistent/movie.mp4")
    assert e.value.name == "MK_ENOTFOUND" and "/nonexistent/movie.mp4" in e.value.message


def test_corrupt_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"\x00\x00\x00\x10moov" + os.urandom(200))
    with pytest.raises(mediakit.MediaError) as e:
        mediakit.open(bad)
    assert e.value.name == "MK_EDATA"


def test_wrong_argument_types(sample: Path) -> None:
    with pytest.raises(TypeError):
        mediakit.open(123)  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        mediakit.DecodeSession("not a track")  # type: ignore[arg-type]
    with mediakit.open(sample) as d:
        dec = mediakit.DecodeSession(d.tracks[0])
        with pytest.raises(TypeError):
            dec.decode(b"bytes are not a packet")  # type: ignore[arg-type]
        with pytest.raises(mediakit.MediaError) as e:   # a packet of another track
            dec.decode(d.read_track(1))  # type: ignore[arg-type]  # a Packet (not None) here
        assert e.value.name == "MK_EINVAL"
        with pytest.raises(ValueError):
            mediakit.decode(sample)


def test_closed_objects_raise(sample: Path) -> None:
    d, dec, frame = first_frame(sample)
    packet = d.read_track(0)
    assert packet is not None
    d.close()
    d.close()                                    # twice is harmless
    with pytest.raises(mediakit.MediaError):
        d.read()
    with pytest.raises(mediakit.MediaError):
        mediakit.DecodeSession(d.tracks[0])            # the track's demuxer is closed
    dec.decode(packet)                           # the decoder does not need the demuxer
    packet.close()
    with pytest.raises(mediakit.MediaError):
        packet.data
    with pytest.raises(mediakit.MediaError):
        dec.decode(packet)
    dec.close()
    dec.close()
    with pytest.raises(mediakit.MediaError):
        dec.flush()
    frame.close()
    frame.close()
    with pytest.raises(mediakit.MediaError):
        frame.to_numpy()
    with pytest.raises(mediakit.MediaError):
        frame.planes


def test_view_outlives_its_frame(sample: Path) -> None:
    d, dec, frame = first_frame(sample)
    y = frame.planes[0]
    expected = frame.to_numpy()[: frame.height].copy()
    frame.close()
    del frame
    dec.close()
    d.close()
    gc.collect()
    # the view still reads the picture it was taken from: its memory was kept alive
    assert np.array_equal(y[: expected.shape[0], : expected.shape[1]], expected)


def test_context_managers(sample: Path) -> None:
    with mediakit.open(sample) as d:
        with mediakit.DecodeSession(d.tracks[1]) as dec:
            frames: list[mediakit.Frame] = []
            for p in d.packets(d.tracks[1]):
                with p:
                    frames += dec.decode(p)
        assert dec.closed
    assert d.closed
    assert frames and frames[0].media_type == "audio"


def test_plane_views_are_read_only(sample: Path) -> None:
    """Frame.planes are views of the decoder's memory, which may still be a reference: writing
    to them raises instead of corrupting later pictures."""
    d, dec, frame = first_frame(sample)
    y = frame.planes[0]
    with pytest.raises(ValueError):
        y[0, 0] = 1
    d.close()


def _packet_list(d: mediakit.Demuxer) -> list[tuple[int, int, bytes]]:
    return [(p.track, p.pts, p.data) for p in d.packets()]


def test_file_deleted_while_open_reads_on(sample: Path, tmp_path: Path) -> None:
    """POSIX keeps an unlinked file readable through the open descriptor: the packets read
    after the delete are the intact file's (the oracle: the same file read without the delete)."""
    reference = _packet_list(mediakit.open(sample))
    copy = tmp_path / "gone.mp4"
    copy.write_bytes(open(sample, "rb").read())
    d = mediakit.open(copy)
    first = [(p.track, p.pts, p.data) for _, p in zip(range(10), d.packets())]
    copy.unlink()
    rest = [(p.track, p.pts, p.data) for p in d.packets()]
    assert first + rest == reference


def test_file_cut_while_open_is_a_clear_error_or_a_warning(sample: Path, tmp_path: Path) -> None:
    """A file truncated under an open demuxer (its moov already read): reading goes on until
    the missing bytes, then a MediaError or a TruncatedWarning, never a crash; every packet
    returned before is the intact file's."""
    import warnings
    reference = _packet_list(mediakit.open(sample))
    copy = tmp_path / "cut.mp4"
    data = open(sample, "rb").read()
    copy.write_bytes(data)
    d = mediakit.open(copy)
    with open(copy, "r+b") as f:
        f.truncate(len(data) // 2)
    got = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for p in d.packets():
                got.append((p.track, p.pts, p.data))
        except mediakit.MediaError as e:
            assert e.message, "the error says what happened"
        else:
            assert any(issubclass(w.category, mediakit.TruncatedWarning) for w in caught), \
                "a cut file ends with a TruncatedWarning when it does not raise"
    assert len(got) < len(reference)
    assert got[:-1] == reference[:len(got) - 1], "the packets before the cut are the intact file's"
