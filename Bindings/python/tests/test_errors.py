"""Exceptions per error kind: every failure status of the C header (mediakit_types.h) has its
MediaKitError subclass, and real failures raise the class of their status (the oracle for the
status is the header's meaning of it: a missing file is MK_ENOTFOUND, damaged data MK_EDATA ...).
The older name MediaError still catches them all."""
from __future__ import annotations

import pickle
import re
from fractions import Fraction
from pathlib import Path

import pytest

import mediakit
from mediakit import errors

from conftest import REPO


def header_statuses() -> dict[str, int]:
    """The MK_E* codes #defined in Include/mediakit/mediakit_types.h."""
    text = (REPO / "Include" / "mediakit" / "mediakit_types.h").read_text()
    return {name: int(value) for name, value in re.findall(r"#define\s+(MK_E\w+)\s+\((-\d+)\)", text)}


def test_every_failure_status_of_the_header_has_its_class() -> None:
    statuses = header_statuses()
    assert statuses["MK_EINVAL"] == -3 and len(statuses) >= 13
    flow = {"MK_EAGAIN", "MK_EOF"}                 # flow control, never raised
    warning = {"MK_ETRUNCATED"}                    # a TruncatedWarning, not an error
    classes = set()
    for name, status in statuses.items():
        if name in flow | warning:
            continue
        cls = errors.error_class(status)
        assert cls is not mediakit.MediaKitError, f"{name} has no MediaKitError subclass"
        assert cls.status_code == status and cls.__name__ in mediakit.__all__
        e = mediakit.MediaKitError(status, "why", "mk_something")
        assert type(e) is cls and isinstance(e, mediakit.MediaError) and e.name == name
        assert str(e) == f"{name}: why" and e.args == (f"{name}: why",)
        classes.add(cls)
    assert len(classes) == len(statuses) - len(flow | warning)    # one class per status


def test_the_classes_are_the_builtin_kinds_python_users_catch() -> None:
    assert issubclass(mediakit.InvalidArgumentError, ValueError)
    assert issubclass(mediakit.InvalidDataError, ValueError)
    assert issubclass(mediakit.MediaIOError, OSError)
    assert issubclass(mediakit.OutOfMemoryError, MemoryError)
    assert issubclass(mediakit.StateError, RuntimeError)
    assert mediakit.MediaError is mediakit.MediaKitError


def test_errors_survive_pickling() -> None:
    """Ray sends a worker's exception to the driver pickled: class and fields come back."""
    for status in (-3, -6, -7, -8):
        e = mediakit.MediaKitError(status, "the file /x is damaged at offset 12", "mk_demuxer_open")
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is type(e) and (back.status, back.name, back.message, back.function) == \
            (e.status, e.name, e.message, e.function)


def test_real_failures_raise_their_class(sample: Path, shared_media: Path, tmp_path: Path) -> None:
    with pytest.raises(mediakit.NotFoundError) as missing:
        mediakit.open(tmp_path / "missing.mp4")
    assert missing.value.name == "MK_ENOTFOUND" and "missing.mp4" in missing.value.message

    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(mediakit.UnsupportedError) as unknown:
        mediakit.open(garbage)
    assert "no container MediaKit reads recognises" in unknown.value.message

    with pytest.raises(mediakit.InvalidDataError) as damaged:
        mediakit.open(b"OggS" + bytes(200))          # a capture pattern, no valid page
    assert isinstance(damaged.value, ValueError) and "Ogg" in damaged.value.message

    with mediakit.open(sample) as a, mediakit.open(sample) as b:
        decoder = mediakit.DecodeSession(a.tracks[0])
        packet = b.read_track(1)
        assert packet is not None
        with pytest.raises(mediakit.InvalidArgumentError):   # a packet of another track
            decoder.send(packet)
        decoder.close()

    with mediakit.StreamParser() as parser:
        with pytest.raises(mediakit.StateError):              # a seek before any data
            parser.seek(1.0)

    with pytest.raises(mediakit.NotFoundError) as no_decoder:  # no plugin decodes it
        mediakit.DecodeSession(mediakit.CodecParameters("no-such-codec", "video", width=64, height=64))
    assert "no-such-codec" in no_decoder.value.message

    with pytest.raises(mediakit.MediaIOError):
        mediakit.Muxer(tmp_path / "no" / "such" / "folder.mp4")

    with pytest.raises(mediakit.UnsupportedError) as bad_extension:
        mediakit.Muxer(tmp_path / "out.xyz")
    assert ".xyz" in bad_extension.value.message

    with pytest.raises(ValueError, match="32-bit"):            # checked in Python before the call
        mediakit.DecodeSession(mediakit.CodecParameters("h264", "video", time_base=Fraction(1, 1 << 40)))
