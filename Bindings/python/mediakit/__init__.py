"""MediaKit for Python: read media files track by track and decode them through
MediaKit's codec plugins, over libmediakit's C API (ctypes).

    import mediakit
    with mediakit.open("movie.mp4") as demuxer:
        video = next(t for t in demuxer.tracks if t.media_type == "video")
        decoder = mediakit.DecodeSession(video)
        for packet in demuxer.packets(video):
            for frame in decoder.decode(packet):
                nv12 = frame.to_numpy()        # (height * 3 // 2, width) uint8
        for frame in decoder.flush():
            ...

Every object owns its C handle and frees it exactly once: call close() (twice is
harmless) or use it as a context manager; a finalizer is only a safety net. Errors from the
library raise the ``MediaKitError`` subclass of their kind (``NotFoundError``,
``InvalidDataError``, ``UnsupportedError`` ... see ``mediakit.errors``) with the status and the
library's message; using a closed object raises ``InvalidArgumentError``. ``MediaError`` is
the older name of ``MediaKitError``.

``Muxer`` writes MP4, Matroska / WebM or Ogg files from a demuxer's tracks or from
``CodecParameters`` and the caller's own packets (``Packet.create``).

A file cut short (it ends inside a packet, page or frame) is read and decoded as far as
it goes, as ffmpeg (and PyAV) do: iteration simply ends, and a ``TruncatedWarning``
naming the offset of the cut is issued through the ``warnings`` module (also listed in
``Demuxer.warnings``). To make it an error::

    import warnings
    warnings.simplefilter("error", mediakit.TruncatedWarning)

The package is split by family, as PyAV's is; this module only re-exports. From the bottom up:
``_ffi`` (ctypes declarations of the C API, loading libmediakit), ``errors`` (status codes, the
exceptions and the status check), ``_common`` (helpers shared by the rest), ``_registry``
(plugins, backends, containers), ``_demux`` (Demuxer, Track, Packet, CodecParameters), ``_mux``
(Muxer), ``_open`` (open), ``_audio`` (AudioConverter), ``_frame`` (Frame), ``_decode``
(DecodeSession), ``_session`` (AsyncDecodeSession), ``_encode`` (Encoder), ``_venc`` (VideoEncoder, CompressionSession), ``_writer`` (Writer), ``_stream`` (StreamParser),
``_files`` (decode, remux, transcode), ``_tags`` (edit_tags: mk-tag), ``_video`` (VideoDecoder: frames by index as one array),
``_audio_decoder`` (AudioDecoder: samples by time as one float32 array),
``samplers`` (clips for training, torchcodec.samplers' functions). Each imports only modules below it.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

# Names kept importable as before though not in __all__ ("X as X": re-exported for mypy too).
from . import errors as errors
from ._ffi import lib as lib
from .errors import EINVAL as EINVAL
from .errors import (BackendError, CancelledError, InvalidArgumentError, InvalidDataError, LimitError, MediaError,
                     MediaIOError, MediaKitError, NotFoundError, OutOfMemoryError, PluginError, SessionInvalidatedError,
                     StateError, TruncatedWarning,
                     UnsupportedError)
from ._common import SCALE_FILTERS
from ._common import Layout as Layout, PathLike as PathLike
from ._registry import (LIBRARY_PATH, Backend, ContainerFormat, Plugin, PluginFailure, backends, containers, get_threads,
                        load_plugins, plugin_failures, plugin_search_paths, plugins, set_threads, version)
from ._demux import CodecParameters, Demuxer, Orientation, Packet, Streams, Track
from ._demux import Edit as Edit, Source as Source
from ._mux import Muxer
from ._open import open
from ._audio import AudioConverter, NO_DATA_NOW
from ._audio import _NUMPY_TYPES as _NUMPY_TYPES  # mediakit.ray's dtypes of empty batches
from ._frame import Frame
from ._decode import DecodeSession
from ._session import AsyncDecodeSession, Recovery
from ._encode import Encoder
from ._venc import CompressionSession, VideoEncoder
from ._writer import Writer
from ._stream import PacketTableInfo, StreamEvent, StreamFormat, StreamParser
from ._files import Progress, decode, remux, transcode
from ._metadata import Attachment, Chapter, Instrument, InstrumentLoop, Marker, Metadata, Tag
from ._tags import edit_tags
from ._video import FrameBatch, VideoDecoder, VideoMetadata
from ._audio_decoder import AudioDecoder, AudioSamples
from . import samplers as samplers
from ._system import missing_system_libraries

__all__ = ["MediaKitError", "MediaError", "InvalidArgumentError", "OutOfMemoryError", "UnsupportedError",
           "InvalidDataError", "MediaIOError", "NotFoundError", "StateError", "PluginError", "LimitError",
           "BackendError", "CancelledError", "SessionInvalidatedError", "TruncatedWarning",
           "Plugin", "Track", "Streams", "CodecParameters", "Packet", "Frame", "Demuxer", "Muxer", "DecodeSession",
           "AsyncDecodeSession", "AudioConverter", "NO_DATA_NOW", "Encoder", "VideoEncoder", "CompressionSession", "Writer", "StreamParser", "StreamEvent",
           "StreamFormat", "PacketTableInfo",
           "VideoDecoder", "VideoMetadata", "FrameBatch", "AudioDecoder", "AudioSamples", "Metadata", "Tag", "Chapter", "Marker",
           "Instrument", "InstrumentLoop", "Attachment",
           "Backend", "PluginFailure", "Progress", "Orientation", "ContainerFormat", "Recovery",
           "open", "decode", "remux", "transcode", "edit_tags", "plugins", "backends", "containers", "plugin_failures",
           "plugin_search_paths",
           "load_plugins", "version", "set_threads", "get_threads", "LIBRARY_PATH", "SCALE_FILTERS", "missing_system_libraries"]

# Renamed names, kept for one release: the same objects under their old names. Using one (an
# import too) warns (DeprecationWarning) naming the new name. Not in __all__ (a star import does
# not warn). name -> (new name, the release that renamed it, what it is).
_RENAMED: dict[str, tuple[str, str, str]] = {
    "Decoder": ("DecodeSession", "0.3",
                "the same class: one track decoded on the caller's thread, as C mk_decode_session and Swift "
                "DecodeSession; the name DecodeSession meant AsyncDecodeSession up to 0.2"),
}

if not TYPE_CHECKING:
    def __getattr__(name: str) -> Any:
        renamed = _RENAMED.get(name)
        if renamed is None:
            raise AttributeError(f"module 'mediakit' has no attribute {name!r}")
        new, release, what = renamed
        warnings.warn(f"mediakit.{name} was renamed mediakit.{new} in {release} ({what}); the old name goes in the "
                      f"next release", DeprecationWarning, stacklevel=2)
        return globals()[new]
