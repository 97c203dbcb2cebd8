"""What the loaded library offers: its version and path, plugins, backends, containers
(mk_plugin_*, mk_backend_*, mk_container_*)."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Optional

from . import _ffi
from ._ffi import lib
from .errors import InvalidArgumentError, EINVAL
from ._common import PathLike, _MEDIA_TYPES, _PIXEL_FORMATS, _SAMPLE_FORMATS, _path, _text


#: The libmediakit this package loaded.
LIBRARY_PATH: str = _ffi.PATH


def version() -> str:
    """The library version, e.g. "0.2.0"."""
    return _text(lib.mk_version())


def set_threads(threads: int) -> None:
    """Sets the process's thread budget (mk_set_thread_limit): every decoder made afterwards
    (DecodeSession, AsyncDecodeSession, VideoDecoder ...) uses at most ``threads`` threads, one asked
    for 0 ("every core") exactly that many, so that a data loader's workers do not each take
    every core (as ``torch.set_num_threads`` for torch). 0 removes the budget. Without a call,
    the environment variable ``MEDIAKIT_THREADS`` sets it. Picture conversions run on the
    calling thread. Raises InvalidArgumentError for a negative count."""
    lib.mk_set_thread_limit(int(threads))


def get_threads() -> int:
    """The thread budget in force (0: none); see ``set_threads``."""
    return int(lib.mk_thread_limit())


@dataclass(frozen=True)
class Plugin:
    """A codec plugin libmediakit loaded."""
    name: str
    version: str
    path: str
    codecs: dict[str, int] = field(default_factory=dict)  #: codec name -> priority


def plugins() -> list[Plugin]:
    """The codec plugins found (the default locations are searched on first use)."""
    out = []
    for i in range(lib.mk_plugin_count()):
        info = _ffi.PluginInfo(struct_size=ctypes.sizeof(_ffi.PluginInfo))
        lib.mk_plugin_get_info(i, ctypes.byref(info))
        codecs: dict[str, int] = {}
        for item in _text(info.codecs).split(","):
            if item:
                name, _, prio = item.partition(":")
                codecs[name] = int(prio)
        out.append(Plugin(_text(info.name), _text(info.version), _text(info.path), codecs))
    return out


_BACKEND_KINDS = {1: "decoder", 2: "encoder", 3: "picture_converter"}


@dataclass(frozen=True)
class Backend:
    """A decoder or encoder for a codec, or a picture converter, that a loaded plugin registered
    (C ``mk_backend_info``). ``name`` is what DecodeSession's / Encoder's ``backend=`` take; among the
    backends of a codec the highest ``priority`` is chosen first. An encoder also says what it
    takes (the other kinds leave those fields empty); a picture converter whether it ``scales``
    and, through ``converts()``, which conversions it makes."""
    kind: str                       #: "decoder", "encoder" or "picture_converter"
    codec: str                      #: FFmpeg's codec name; "" for a picture converter
    name: str
    media_type: str                 #: "audio" or "video"; "" for a picture converter
    priority: int
    plugin: str                     #: the plugin's name ("ffmpeg")
    plugin_path: str                #: the file it was loaded from
    #: Encoder: the sample formats it takes ("s16", "fltp" ...), preferred first.
    sample_formats: tuple[str, ...] = ()
    #: Encoder: the rates it takes (Hz); () means any rate in ``sample_rate_range``.
    sample_rates: tuple[int, ...] = ()
    #: Encoder: with ``sample_rates`` empty, the (lowest, highest) rate it takes.
    sample_rate_range: tuple[int, int] = (0, 0)
    max_channels: int = 0           #: encoder: channels it takes, 1 to this
    #: Encoder: the WAVE channel masks it takes (one per channel count); (): each count's default order.
    channel_masks: tuple[int, ...] = ()
    #: Encoder: the (lowest, highest) bit rate it can be asked for; None when it takes none.
    bit_rate_range: Optional[tuple[int, int]] = None
    scales: bool = False            #: picture converter: it also changes the picture size
    _index: int = field(repr=False, compare=False, default=-1)

    def converts(self, source: str, target: str) -> bool:
        """Picture converter: True when it takes ``source`` pictures and returns ``target`` ones
        (pixel format names as ``Frame.format``: "yuv420p", "nv12" ...). Valid until plugins are
        loaded again (the listing's order changes)."""
        if self.kind != "picture_converter":
            raise InvalidArgumentError(EINVAL, f"{self.name} is a {self.kind}, not a picture converter", "Backend.converts")
        codes = {name: code for code, name in _PIXEL_FORMATS.items()}
        for name in (source, target):
            if name not in codes:
                raise InvalidArgumentError(EINVAL, f"unknown pixel format {name!r} (one of {', '.join(codes)})", "Backend.converts")
        supported = ctypes.c_int32()
        lib.mk_backend_converts(self._index, codes[source], codes[target], ctypes.byref(supported))
        return supported.value == 1


def backends() -> list[Backend]:
    """Every backend of the loaded plugins (the default locations are searched first): the
    decoders, then the encoders, then the picture converters, each by priority, highest first."""
    out = []
    for i in range(lib.mk_backend_count()):
        b = _ffi.BackendInfo(struct_size=ctypes.sizeof(_ffi.BackendInfo))
        lib.mk_backend_get_info(i, ctypes.byref(b))
        out.append(Backend(_BACKEND_KINDS.get(b.kind, str(b.kind)), _text(b.codec), _text(b.name),
                           _MEDIA_TYPES.get(b.media_type, ""), int(b.priority), _text(b.plugin), _text(b.plugin_path),
                           sample_formats=tuple(_SAMPLE_FORMATS.get(b.sample_formats[k], str(b.sample_formats[k]))
                                                for k in range(b.sample_format_count)),
                           sample_rates=tuple(int(b.sample_rates[k]) for k in range(b.sample_rate_count)),
                           sample_rate_range=(int(b.min_sample_rate), int(b.max_sample_rate)),
                           max_channels=int(b.max_channels),
                           channel_masks=tuple(int(b.channel_masks[k]) for k in range(b.channel_mask_count)),
                           bit_rate_range=(int(b.min_bit_rate), int(b.max_bit_rate)) if b.max_bit_rate > 0 else None,
                           scales=b.scales == 1, _index=i))
    return out


@dataclass(frozen=True)
class ContainerFormat:
    """A container format of the library's catalogue (C ``mk_container_info``): one it reads
    (``kind`` "demuxer": ``open`` chooses it by probing the bytes), writes ("muxer":
    ``Muxer`` and ``remux`` choose it by the target's extension), or a raw output of decoded
    frames ("frame_sink": "pcm", "wav", "rawvideo", "y4m", which ``decode`` writes as its
    ``wav`` and ``y4m`` arguments choose)."""
    kind: str                       #: "demuxer", "muxer" or "frame_sink"
    name: str                       #: "mp4", "matroska", "webm", "ogg" ...
    description: str
    extensions: tuple[str, ...]     #: without dots; a muxer's are those that choose it
    mime_types: tuple[str, ...]
    codecs: tuple[str, ...] = ()    #: a muxer's: the codecs it carries; () for a demuxer
    options: tuple[str, ...] = ()   #: a muxer's: the options it takes ("layout", "time-scale" ...)
    #: "" for a built-in format; for a plugin's demuxer (the FFmpeg plugin's libavformat formats,
    #: asked only when no built-in one claims the bytes) the plugin's name, and ``name`` is
    #: "plugin:format" ("ffmpeg:avi"), which ``open(..., demuxer=)`` takes. A plugin's format may
    #: list no extensions or MIME types.
    plugin: str = ""


_CONTAINER_KINDS = {1: "demuxer", 2: "muxer", 3: "frame_sink"}


def containers() -> list[ContainerFormat]:
    """The container formats MediaKit reads (the built-in ones in the order they are probed, then
    the plugins' demuxers: see ``ContainerFormat.plugin``), then those it writes, then the raw
    outputs of ``decode`` (kind "frame_sink"). Listing them loads the plugins."""
    out = []
    for i in range(lib.mk_container_count()):
        c = _ffi.ContainerInfo(struct_size=ctypes.sizeof(_ffi.ContainerInfo))
        lib.mk_container_get_info(i, ctypes.byref(c))
        out.append(ContainerFormat(_CONTAINER_KINDS.get(c.kind, str(c.kind)), _text(c.name), _text(c.description),
                                   tuple(x for x in _text(c.extensions).split(",") if x),
                                   tuple(x for x in _text(c.mime_types).split(",") if x),
                                   tuple(x for x in _text(c.codecs).split(",") if x),
                                   tuple(x for x in _text(c.options).split(",") if x), _text(c.plugin)))
    return out


@dataclass(frozen=True)
class PluginFailure:
    """A file the plugin registry found but refused: ``message`` names it and says why."""
    path: str
    message: str


def plugin_failures() -> list[PluginFailure]:
    """The plugin files that were found but refused (not a plugin, another plugin ABI, a failed entry point)."""
    out = []
    for i in range(lib.mk_plugin_failure_count()):
        path, message = ctypes.c_char_p(), ctypes.c_char_p()
        lib.mk_plugin_failure(i, ctypes.byref(path), ctypes.byref(message))
        out.append(PluginFailure(_text(path.value), _text(message.value)))
    return out


def plugin_search_paths() -> list[str]:
    """The directories and files the registry searched for plugins: MEDIAKIT_PLUGIN_PATH's
    entries, the library's own directory, <prefix>/lib/mediakit/plugins, those of load_plugins()."""
    out = []
    for i in range(lib.mk_plugin_search_count()):
        path = ctypes.c_char_p()
        lib.mk_plugin_search_path(i, ctypes.byref(path))
        out.append(_text(path.value))
    return out


def load_plugins(path: PathLike) -> None:
    """Loads a plugin file, or every plugin in a directory."""
    lib.mk_plugins_load(_path(path))
