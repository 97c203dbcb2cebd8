"""The tag editor (mk-tag, issue 33): ``edit_tags``, over mk_tag_edit (include/mediakit/tags.h)."""
from __future__ import annotations

import ctypes
from typing import Iterable, Mapping, Optional

from ._common import PathLike, _path
from ._ffi import P, _declare, c_status, lib
from .errors import check


class _TagEdits(ctypes.Structure):
    """mk_tag_edits."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("set_count", ctypes.c_int32), ("set", P(ctypes.c_char_p)),
                ("remove_count", ctypes.c_int32), ("remove", P(ctypes.c_char_p)), ("cover_path", ctypes.c_char_p),
                ("remove_pictures", ctypes.c_int32), ("clear", ctypes.c_int32)]


_declare("mk_tag_edits_default", c_status, [P(_TagEdits)], True)
_declare("mk_tag_edit", c_status, [ctypes.c_char_p, P(_TagEdits), ctypes.c_uint32, P(ctypes.c_int32)], True)
for _name in ("mk_tag_edits_default", "mk_tag_edit"):
    getattr(lib, _name).errcheck = check   # errors.py set the others' before this module declared these

_NO_IN_PLACE = 1
_METHODS = {0: "in place", 1: "temporary file", 2: "remux", 3: "unchanged"}


def edit_tags(path: PathLike, set: Optional[Mapping[str, str]] = None, remove: Iterable[str] = (), *,
              cover: Optional[PathLike] = None, remove_pictures: bool = False, clear: bool = False,
              in_place: bool = True) -> str:
    """Edits the tags of the media file at `path` without re-encoding it, as mk-tag does (the
    same file bytes for the same edits): `set` {KEY: VALUE} tags set (an empty VALUE removes the
    key; keys as mk-tag takes them: "title", "album_artist", FFmpeg's or the container's own
    names), `remove` keys removed, `cover` an image file (JPEG, PNG, GIF, BMP, WebP) put in as the
    front cover, `remove_pictures` removes every picture first, `clear` every tag before `set`.

    The file is rewritten in place where the format leaves room (ID3 padding, FLAC PADDING, MP4
    free space next to the moov), else through a temporary file beside it renamed over it
    (in_place=False: always so); it is never left half-written. Returns how it was written:
    "in place", "temporary file", "remux" or "unchanged". Raises (the file then as it was)
    InvalidArgumentError for a malformed edit, NotFoundError, MediaIOError, UnsupportedError for
    a tag or a cover the format does not store, InvalidDataError for a damaged file."""
    e = _TagEdits()
    lib.mk_tag_edits_default(ctypes.byref(e))
    settings = [f"{k}={v}".encode() for k, v in (set or {}).items()]
    removals = [k.encode() for k in remove]
    set_array = (ctypes.c_char_p * len(settings))(*settings)
    remove_array = (ctypes.c_char_p * len(removals))(*removals)
    e.set_count, e.set = len(settings), ctypes.cast(set_array, P(ctypes.c_char_p))
    e.remove_count, e.remove = len(removals), ctypes.cast(remove_array, P(ctypes.c_char_p))
    if cover is not None:
        e.cover_path = _path(cover)
    e.remove_pictures = 1 if remove_pictures else 0
    e.clear = 1 if clear else 0
    method = ctypes.c_int32(-1)
    lib.mk_tag_edit(_path(path), ctypes.byref(e), 0 if in_place else _NO_IN_PLACE, ctypes.byref(method))
    return _METHODS[method.value]
