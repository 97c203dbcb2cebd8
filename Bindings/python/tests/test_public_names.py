"""The package split by family (mediakit/_demux.py, _mux.py ... with __init__.py only
re-exporting) keeps every name `import mediakit` gave before the split. The oracle is the
package as it was before the split (commit BEFORE_SPLIT, read from git and imported from a
copy), not a list written from the new code: each of its public names (its ``__all__`` and
every other name without an underscore that it or its own modules defined) is still in
``mediakit`` and is the same kind of object; classes keep their public members, functions
and methods their signatures (or signatures every old call still fits: new parameters
only appended, each with a default)."""
from __future__ import annotations

import ctypes
import dataclasses
import fractions
import importlib
import inspect
import re
import shutil
import subprocess
import sys
import types
import typing
import warnings
from pathlib import Path
from typing import Any

import pytest

import mediakit

from conftest import REPO

#: The last commit of the package in one __init__.py (2,456 lines).
BEFORE_SPLIT = "310094bfacaef39b7e0a7794a5048404c83d0256"

#: The names renamed since the split so that one name means one thing in Swift, C and Python
#: (issue 29, item 5), old: new: DecodeSession became AsyncDecodeSession in 0.2 (the old name
#: warned through 0.2 and is gone), Decoder became DecodeSession in 0.3 (the old name stays
#: importable for one release, warning, and gives the renamed object; __all__ lists the new name).
RENAMED_SINCE_SPLIT = {"DecodeSession": "AsyncDecodeSession", "Decoder": "DecodeSession"}


def renamed(text: str) -> str:
    """`text` (a signature) with the renamed names as they are now (one pass: the old Decoder is
    the new DecodeSession, not AsyncDecodeSession)."""
    return re.sub(r"(?<![A-Za-z_])(DecodeSession|Decoder)(?![A-Za-z_])", lambda m: RENAMED_SINCE_SPLIT[m.group(1)], text)


def same_or_wider(old: inspect.Parameter, new: inspect.Parameter) -> bool:
    """The same parameter (renamed names as they are now), or one whose annotation is a Union
    of the old one and more (AsyncDecodeSession's track: a Track, or since 0.2 CodecParameters)."""
    if renamed(str(old)) == str(new):
        return True
    widened = new.replace(annotation=str(new.annotation).removeprefix("Union[").split(",")[0])
    return str(new.annotation).startswith("Union[") and renamed(str(old)) == str(widened)


def still_callable_as_before(after: Any, before: Any) -> bool:
    """Whether every call `before` accepted is still accepted by `after`: the old parameters
    (renamed names as they are now) in the same order, kinds, defaults and annotations (or a
    Union of the old annotation and more), then only new parameters that have a default
    (appended, e.g. ContainerFormat's codecs and options in 0.2), and the same return annotation."""
    old, new = inspect.signature(before), inspect.signature(after)
    olds, news = list(old.parameters.values()), list(new.parameters.values())
    if len(news) < len(olds) or renamed(str(old.return_annotation)) != str(new.return_annotation):
        return False
    if any(not same_or_wider(o, n) for o, n in zip(olds, news)):
        return False
    return all(p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in news[len(olds):])


def package_before_split(folder: Path) -> types.ModuleType:
    """The package of BEFORE_SPLIT, imported as `mediakit_before_split` (its own copy of the
    classes; the library is the same file, found through MEDIAKIT_LIBRARY as the tests' is)."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the package before the split is read from git history")
    package = folder / "mediakit_before_split"
    package.mkdir()
    for name in ("__init__.py", "_ffi.py", "errors.py"):
        text = subprocess.run(["git", "-C", str(REPO), "show", f"{BEFORE_SPLIT}:Bindings/python/mediakit/{name}"],
                              check=True, capture_output=True, text=True).stdout
        (package / name).write_text(text)
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module("mediakit_before_split")
    finally:
        sys.path.remove(str(folder))


def public_names(module: types.ModuleType) -> set[str]:
    """``__all__`` plus the names without an underscore that are the package's own: defined by
    it or its modules (classes, functions), or values that are no module of the standard
    library and no name of `typing` (``from typing import Optional`` is not MediaKit's API)."""
    names = set(module.__all__)
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, types.ModuleType) and not value.__name__.startswith(module.__name__):
            continue
        owner = getattr(value, "__module__", None)
        if inspect.isclass(value) or inspect.isfunction(value):
            if owner is not None and owner.startswith(module.__name__):
                names.add(name)
        elif not any(getattr(std, name, None) is value for std in (typing, dataclasses, fractions, types)):
            names.add(name)
    return names


def kind(value: Any) -> str:
    if isinstance(value, types.ModuleType):
        return "module"
    if inspect.isclass(value):
        return "class"
    if inspect.isfunction(value):
        return "function"
    return type(value).__name__


def test_every_name_of_the_package_before_the_split_is_still_there(tmp_path: Path) -> None:
    old = package_before_split(tmp_path)
    names = public_names(old)
    assert {"Demuxer", "Muxer", "Decoder", "open", "errors", "PathLike", "Source", "EINVAL"} <= names
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # the old names warn (test_renamed_names_warn)
        missing = sorted(n for n in names if not hasattr(mediakit, n))
    assert not missing, f"no longer importable from mediakit: {missing}"
    assert {RENAMED_SINCE_SPLIT.get(n, n) for n in old.__all__} <= set(mediakit.__all__)
    for name in sorted(names):
        before, after = getattr(old, name), getattr(mediakit, RENAMED_SINCE_SPLIT.get(name, name))
        assert kind(after) == kind(before), f"mediakit.{name}: a {kind(after)}, was a {kind(before)}"
        if inspect.isfunction(before):
            assert still_callable_as_before(after, before), f"{name}: {inspect.signature(after)}, was {inspect.signature(before)}"
        elif inspect.isclass(before):
            assert after.__name__ == RENAMED_SINCE_SPLIT.get(before.__name__, before.__name__)
            # The public bases stay (private helper bases such as _Owned may come and go).
            assert ([c.__name__ for c in after.__mro__ if not c.__name__.startswith("_")]
                    == [RENAMED_SINCE_SPLIT.get(c.__name__, c.__name__) for c in before.__mro__ if not c.__name__.startswith("_")]), name
            members = {m for m in vars(before) if not m.startswith("_") or m in ("__init__", "__iter__", "__enter__")}
            for m in sorted(members):
                assert hasattr(after, m), f"mediakit.{name}.{m} is gone"
                b, a = inspect.getattr_static(before, m), inspect.getattr_static(after, m)
                assert kind(a) == kind(b), f"mediakit.{name}.{m}: a {kind(a)}, was a {kind(b)}"
                if inspect.isfunction(b):
                    assert still_callable_as_before(a, b), f"{name}.{m}: {inspect.signature(a)}, was {inspect.signature(b)}"
        elif isinstance(before, (int, str, dict)):
            assert after == before, name
        elif isinstance(before, ctypes.CDLL):
            assert after._name == before._name, name       # the same libmediakit
        elif not isinstance(before, types.ModuleType):
            assert repr(after) == repr(before).replace("mediakit_before_split", "mediakit"), name


def test_the_private_names_others_import_are_still_there() -> None:
    """mediakit.ray reads mediakit._NUMPY_TYPES; the tests import mediakit.errors."""
    from mediakit import errors
    assert mediakit._NUMPY_TYPES["f32"] == "<f4" and errors.error_class(-6) is mediakit.InvalidDataError


def test_decoder_old_name_warns_and_decode_session_is_the_same_thread_session(sample: Path) -> None:
    """``mediakit.Decoder`` is ``mediakit.DecodeSession``'s name up to 0.2: it warns
    (DeprecationWarning naming DecodeSession and the release), in an import too, and is the same
    class; not in ``__all__`` (a star import does not warn). ``mediakit.DecodeSession`` is no longer
    AsyncDecodeSession's alias (it was one, deprecated, in 0.2): it decodes on the caller's thread,
    and gives the frames AsyncDecodeSession gives for the same track; the 0.2 call with
    ``on_frame`` is a TypeError, not a session of another kind."""
    assert "Decoder" not in mediakit.__all__ and {"DecodeSession", "AsyncDecodeSession"} <= set(mediakit.__all__)
    with pytest.warns(DeprecationWarning, match=r"mediakit.Decoder was renamed mediakit.DecodeSession in 0.3 "):
        namespace: dict[str, Any] = {}
        exec("from mediakit import Decoder", namespace)
    assert namespace["Decoder"] is mediakit.DecodeSession
    assert not issubclass(mediakit.DecodeSession, mediakit.AsyncDecodeSession)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec("from mediakit import *", {})
    with mediakit.open(sample) as demuxer:
        track = demuxer.tracks[1]
        with pytest.warns(DeprecationWarning, match="DecodeSession"):
            old = mediakit.Decoder(track)  # type: ignore[attr-defined]
        assert type(old) is mediakit.DecodeSession
        old.close()
        with pytest.raises(TypeError, match="on_frame"):
            mediakit.DecodeSession(track, on_frame=None)  # type: ignore[call-arg]
        with mediakit.DecodeSession(track) as session:
            same_thread = [(f.pts, f.samples) for f in session.frames(demuxer.packets(track))]
    with mediakit.open(sample) as demuxer:
        ahead = [(f.pts, f.samples) for f in mediakit.AsyncDecodeSession(demuxer.tracks[1], queue_frames=4)]
    assert same_thread == ahead and len(ahead) > 100


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
        getattr(mediakit, "NoSuchName")
