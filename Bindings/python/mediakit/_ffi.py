"""ctypes declarations of libmediakit's C API (Include/mediakit/mediakit.h).

The library is found, in order, through:
  1. the MEDIAKIT_LIBRARY environment variable (a path to libmediakit.so);
  2. a copy inside this package (mediakit/_lib/: the wheel's from `make wheel`, with the Swift
     runtime and the tools beside it, or the one `pip install` copies from a built checkout);
  3. the SwiftPM build folders of the checkout this package was installed from or
     lives in (.build/release, then .build/debug).
Plugins are found by libmediakit itself: the folder it was loaded from, then
MEDIAKIT_PLUGIN_PATH and <prefix>/lib/mediakit/plugins.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Any

ABI_VERSION = 1

#: MK_NOPTS_VALUE: no timestamp.
NOPTS_VALUE = -(1 << 63)

c_status = ctypes.c_int32
c_handle = ctypes.c_void_p


#: mk_progress_callback: (user, fraction, done, total) -> 0 to go on, non-zero to cancel.
PROGRESS = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_double, ctypes.c_int64, ctypes.c_int64)
#: mk_warning_callback(user, message): a warning of mk_remux, the message borrowed for the call.
WARNING = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)

#: mk_audio_input_callback: (user, wanted, const void *const **planes) -> frames given, 0 at the end.
AUDIO_INPUT = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))

#: mk_audio_packet_callback: (user, wanted, mk_packet **packet) -> 1 with a packet (owned by the
#: library then), 0 at the end, MK_EAGAIN for "no data now".
AUDIO_PACKET_INPUT = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))

IO_READ = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint8), ctypes.c_size_t)
IO_SEEK = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64)
IO_SIZE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)


class IO(ctypes.Structure):
    """mk_io: read callbacks for mk_demuxer_open_io."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("read", IO_READ), ("seek", IO_SEEK),
                ("size", IO_SIZE), ("name", ctypes.c_char_p)]


class StreamEventInfo(ctypes.Structure):
    """mk_stream_event."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("kind", ctypes.c_int32), ("text", ctypes.c_char_p),
                ("data", ctypes.POINTER(ctypes.c_uint8)), ("size", ctypes.c_size_t), ("offset", ctypes.c_int64),
                ("value", ctypes.c_int64), ("value2", ctypes.c_int64), ("seconds", ctypes.c_double),
                ("sample_rate", ctypes.c_int32), ("channels", ctypes.c_int32), ("frames_per_packet", ctypes.c_int32),
                ("frames", ctypes.c_int32), ("flags", ctypes.c_int32)]


class Edit(ctypes.Structure):
    """mk_edit: one entry of an edit list."""
    _fields_ = [("segment_duration", ctypes.c_int64), ("media_time", ctypes.c_int64), ("media_rate", ctypes.c_double)]


class TrackInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("index", ctypes.c_int32), ("id", ctypes.c_int32),
        ("media_type", ctypes.c_int32), ("codec", ctypes.c_char_p), ("codec_tag", ctypes.c_char_p),
        ("extradata", ctypes.POINTER(ctypes.c_uint8)), ("extradata_size", ctypes.c_size_t),
        ("time_base_num", ctypes.c_int32), ("time_base_den", ctypes.c_int32),
        ("duration", ctypes.c_int64), ("sample_count", ctypes.c_int64),
        ("width", ctypes.c_int32), ("height", ctypes.c_int32),
        ("sample_rate", ctypes.c_int32), ("channels", ctypes.c_int32),
        ("rotation", ctypes.c_double), ("language", ctypes.c_char_p),
        ("frame_rate_num", ctypes.c_int32), ("frame_rate_den", ctypes.c_int32),
        ("encoder_delay", ctypes.c_int32), ("encoder_padding", ctypes.c_int32),
        ("unsupported", ctypes.c_char_p),
        # appended later (struct_size)
        ("reflected", ctypes.c_int32), ("matrix", ctypes.c_int32 * 9), ("edits", ctypes.POINTER(Edit)),
        ("edit_count", ctypes.c_int32), ("movie_time_scale", ctypes.c_int64), ("bit_rate", ctypes.c_int64),
        ("sample_aspect_num", ctypes.c_int32), ("sample_aspect_den", ctypes.c_int32),
        ("color_range", ctypes.c_int32), ("color_primaries", ctypes.c_int32), ("color_transfer", ctypes.c_int32),
        ("color_space", ctypes.c_int32), ("channel_mask", ctypes.c_uint64), ("bits_per_coded_sample", ctypes.c_int32),
        ("block_align", ctypes.c_int32), ("reorder_depth", ctypes.c_int32), ("encrypted", ctypes.c_int32),
        ("trims_on_packets", ctypes.c_int32), ("sample_entry", ctypes.POINTER(ctypes.c_uint8)),
        ("sample_entry_size", ctypes.c_size_t), ("is_default", ctypes.c_int32), ("forced", ctypes.c_int32),
    ]


class PacketInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("track", ctypes.c_int32),
        ("pts", ctypes.c_int64), ("dts", ctypes.c_int64), ("duration", ctypes.c_int64),
        ("position", ctypes.c_int64), ("is_keyframe", ctypes.c_int32),
        ("data", ctypes.POINTER(ctypes.c_uint8)), ("size", ctypes.c_size_t),
        # appended later (struct_size)
        ("time_base_num", ctypes.c_int32), ("time_base_den", ctypes.c_int32), ("duration_stated", ctypes.c_int32),
        ("trim_start", ctypes.c_int32), ("trim_end", ctypes.c_int32), ("truncated", ctypes.c_int32),
        ("discard", ctypes.c_int32), ("parameters_changed", ctypes.c_int32),
    ]


class FrameInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("media_type", ctypes.c_int32), ("format", ctypes.c_int32),
        ("pts", ctypes.c_int64), ("duration", ctypes.c_int64),
        ("time_base_num", ctypes.c_int32), ("time_base_den", ctypes.c_int32),
        ("width", ctypes.c_int32), ("height", ctypes.c_int32),
        ("sample_rate", ctypes.c_int32), ("channels", ctypes.c_int32), ("sample_count", ctypes.c_int32),
        ("plane_count", ctypes.c_int32), ("planes", ctypes.c_void_p * 8),
        ("strides", ctypes.c_int64 * 8), ("plane_sizes", ctypes.c_int64 * 8),
        # appended later (struct_size)
        ("is_keyframe", ctypes.c_int32), ("color_range", ctypes.c_int32), ("color_primaries", ctypes.c_int32),
        ("color_transfer", ctypes.c_int32), ("color_space", ctypes.c_int32), ("chroma_location", ctypes.c_int32),
        ("sample_aspect_num", ctypes.c_int32), ("sample_aspect_den", ctypes.c_int32), ("channel_mask", ctypes.c_uint64),
    ]


class FrameViewInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("plane_count", ctypes.c_int32), ("in_place", ctypes.c_int32),
        ("planes", ctypes.c_void_p * 4), ("strides", ctypes.c_int64 * 4),
        ("row_bytes", ctypes.c_int64 * 4), ("rows", ctypes.c_int64 * 4),
    ]


class BackendInfo(ctypes.Structure):
    """mk_backend_info: a decoder, encoder or picture converter a plugin registered."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("kind", ctypes.c_int32), ("codec", ctypes.c_char_p),
                ("name", ctypes.c_char_p), ("media_type", ctypes.c_int32), ("priority", ctypes.c_int32),
                ("plugin", ctypes.c_char_p), ("plugin_path", ctypes.c_char_p),
                # appended later: what an encoder takes; whether a picture converter scales
                ("sample_formats", ctypes.POINTER(ctypes.c_int32)), ("sample_format_count", ctypes.c_int32),
                ("sample_rates", ctypes.POINTER(ctypes.c_int32)), ("sample_rate_count", ctypes.c_int32),
                ("min_sample_rate", ctypes.c_int32), ("max_sample_rate", ctypes.c_int32),
                ("max_channels", ctypes.c_int32),
                ("channel_masks", ctypes.POINTER(ctypes.c_uint64)), ("channel_mask_count", ctypes.c_int32),
                ("min_bit_rate", ctypes.c_int64), ("max_bit_rate", ctypes.c_int64), ("scales", ctypes.c_int32)]


class ContainerInfo(ctypes.Structure):
    """mk_container_info: a container format the library reads or writes."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("kind", ctypes.c_int32), ("name", ctypes.c_char_p),
                ("description", ctypes.c_char_p), ("extensions", ctypes.c_char_p), ("mime_types", ctypes.c_char_p),
                ("codecs", ctypes.c_char_p), ("options", ctypes.c_char_p), ("plugin", ctypes.c_char_p)]


class Orientation(ctypes.Structure):
    """mk_orientation (fixed layout)."""
    _fields_ = [("transposed", ctypes.c_int32), ("hflip", ctypes.c_int32), ("vflip", ctypes.c_int32)]


class PluginInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("name", ctypes.c_char_p), ("version", ctypes.c_char_p),
        ("path", ctypes.c_char_p), ("codecs", ctypes.c_char_p),
    ]


class DecoderSettings(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("backend", ctypes.c_char_p),
        ("threads", ctypes.c_int32), ("trim", ctypes.c_int32),
    ]


class AudioFormat(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("sample_format", ctypes.c_int32), ("sample_rate", ctypes.c_int32),
                ("channels", ctypes.c_int32), ("channel_mask", ctypes.c_uint64)]


class AudioConverterSettings(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("quality", ctypes.c_int32), ("dither", ctypes.c_int32),
                ("mix_matrix", ctypes.POINTER(ctypes.c_double)), ("trim", ctypes.c_int32), ("threads", ctypes.c_int32),
                ("backend", ctypes.c_char_p),
                # appended later (struct_size)
                ("prime_leading", ctypes.c_int64), ("prime_trailing", ctypes.c_int64),
                # appended later (struct_size)
                ("channel_map", ctypes.POINTER(ctypes.c_int32)), ("prime_method", ctypes.c_int32)]


class AudioConverterStats(ctypes.Structure):
    """mk_audio_converter_stats."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("input_frames", ctypes.c_int64), ("output_frames", ctypes.c_int64),
                ("latency", ctypes.c_int32),
                # appended later (struct_size)
                ("prime_leading_frames", ctypes.c_int32), ("prime_trailing_frames", ctypes.c_int32),
                ("max_output_packet_size", ctypes.c_int32)]


class EncoderSettings(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("codec", ctypes.c_char_p), ("bit_rate", ctypes.c_int64),
                ("has_quality", ctypes.c_int32), ("quality", ctypes.c_double), ("complexity", ctypes.c_int32),
                ("application", ctypes.c_int32), ("frame_duration", ctypes.c_double), ("sample_rate", ctypes.c_int32),
                ("channels", ctypes.c_int32), ("backend", ctypes.c_char_p), ("copy_video", ctypes.c_int32),
                # appended later (mk_transcode only)
                ("progress", PROGRESS), ("progress_user", ctypes.c_void_p),
                # appended later (mk_encoder_open)
                ("adjustable_sample_rate", ctypes.c_int32)]


class TranscodeSettings(ctypes.Structure):
    """mk_transcode_settings: mk_transcode_with's (0.2): the encoder's settings by pointer, and
    the transcode-only fields."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("encoder", ctypes.POINTER(EncoderSettings)),
                ("copy_video", ctypes.c_int32), ("progress", PROGRESS), ("progress_user", ctypes.c_void_p),
                # appended later: the tracks and the video re-encode
                ("video_codec", ctypes.c_char_p), ("crf", ctypes.c_double), ("qp", ctypes.c_double),
                ("video_bit_rate", ctypes.c_int64), ("preset", ctypes.c_char_p), ("profile", ctypes.c_char_p),
                ("gop_size", ctypes.c_int32), ("max_b_frames", ctypes.c_int32), ("threads", ctypes.c_int32),
                ("scale_width", ctypes.c_int32), ("scale_height", ctypes.c_int32), ("scale_filter", ctypes.c_int32),
                ("fps_num", ctypes.c_int32), ("fps_den", ctypes.c_int32), ("no_video", ctypes.c_int32),
                ("no_audio", ctypes.c_int32), ("copy_audio", ctypes.c_int32),
                # appended later: the tags copied or set, the ID3v2 options
                ("no_metadata", ctypes.c_int32), ("metadata_count", ctypes.c_int32),
                ("metadata", ctypes.POINTER(ctypes.c_char_p)), ("id3v2_version", ctypes.c_int32),
                ("write_id3v2", ctypes.c_int32),
                # appended later: a WAV output's RIFF / RF64 choice (MK_RF64_*)
                ("rf64", ctypes.c_int32)]


class EncoderInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("codec", ctypes.c_char_p), ("sample_rate", ctypes.c_int32),
                ("channels", ctypes.c_int32), ("bit_rate", ctypes.c_int64), ("frame_size", ctypes.c_int32),
                ("encoder_delay", ctypes.c_int32), ("time_base_num", ctypes.c_int32), ("time_base_den", ctypes.c_int32),
                ("extradata", ctypes.POINTER(ctypes.c_uint8)), ("extradata_size", ctypes.c_size_t),
                ("input", AudioFormat),
                # appended later (struct_size)
                ("input_samples", ctypes.c_int64),
                # appended later (struct_size)
                ("max_packet_size", ctypes.c_int64)]


class VideoEncoderSettings(ctypes.Structure):
    """mk_video_encoder_settings (0.3)."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("codec", ctypes.c_char_p), ("width", ctypes.c_int32),
                ("height", ctypes.c_int32), ("pixel_format", ctypes.c_int32), ("time_base_num", ctypes.c_int32),
                ("time_base_den", ctypes.c_int32), ("frame_rate_num", ctypes.c_int32), ("frame_rate_den", ctypes.c_int32),
                ("crf", ctypes.c_double), ("qp", ctypes.c_double), ("bit_rate", ctypes.c_int64),
                ("preset", ctypes.c_char_p), ("profile", ctypes.c_char_p), ("gop_size", ctypes.c_int32),
                ("max_b_frames", ctypes.c_int32), ("threads", ctypes.c_int32), ("sample_aspect_num", ctypes.c_int32),
                ("sample_aspect_den", ctypes.c_int32), ("color_range", ctypes.c_int32), ("color_primaries", ctypes.c_int32),
                ("color_transfer", ctypes.c_int32), ("color_space", ctypes.c_int32)]


class VideoEncoderInfo(ctypes.Structure):
    """mk_video_encoder_info (0.3)."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("codec", ctypes.c_char_p), ("backend", ctypes.c_char_p),
                ("width", ctypes.c_int32), ("height", ctypes.c_int32), ("pixel_format", ctypes.c_int32),
                ("time_base_num", ctypes.c_int32), ("time_base_den", ctypes.c_int32), ("reorder_delay", ctypes.c_int32),
                ("bit_rate", ctypes.c_int64), ("extradata", ctypes.POINTER(ctypes.c_uint8)), ("extradata_size", ctypes.c_size_t),
                ("frames_sent", ctypes.c_int64)]


#: mk_compression_session_callbacks' packet: (user, mk_packet *owned by the callee).
COMPRESSION_PACKET = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
#: mk_compression_session_callbacks' error: (user, status, message borrowed for the call).
COMPRESSION_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p)


class CompressionSessionCallbacks(ctypes.Structure):
    """mk_compression_session_callbacks (0.3)."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("packet", COMPRESSION_PACKET), ("error", COMPRESSION_ERROR)]


class WriterSettings(ctypes.Structure):
    """mk_writer_settings (0.3)."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("video", ctypes.POINTER(VideoEncoderSettings)),
                ("audio", ctypes.POINTER(EncoderSettings)), ("audio_input", ctypes.POINTER(AudioFormat))]


class CodecParams(ctypes.Structure):
    """mk_codec_params: a stream described by its codec parameters (no demuxer)."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("media_type", ctypes.c_int32), ("codec", ctypes.c_char_p),
                ("extradata", ctypes.POINTER(ctypes.c_uint8)), ("extradata_size", ctypes.c_size_t),
                ("width", ctypes.c_int32), ("height", ctypes.c_int32), ("sample_rate", ctypes.c_int32),
                ("channels", ctypes.c_int32), ("time_base_num", ctypes.c_int32), ("time_base_den", ctypes.c_int32),
                ("reorder_depth", ctypes.c_int32),
                # appended later (struct_size)
                ("codec_tag", ctypes.c_char_p), ("language", ctypes.c_char_p), ("matrix", ctypes.c_int32 * 9),
                ("encoder_delay", ctypes.c_int32), ("encoder_padding", ctypes.c_int32), ("bit_rate", ctypes.c_int64),
                ("sample_aspect_num", ctypes.c_int32), ("sample_aspect_den", ctypes.c_int32),
                ("color_range", ctypes.c_int32), ("color_primaries", ctypes.c_int32), ("color_transfer", ctypes.c_int32),
                ("color_space", ctypes.c_int32), ("bits_per_coded_sample", ctypes.c_int32), ("block_align", ctypes.c_int32),
                ("channel_mask", ctypes.c_uint64)]


class AssetStatus(ctypes.Structure):
    """mk_asset_status: where reading or writing stands (mk_demuxer_get_status, mk_muxer_get_status)."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("status", ctypes.c_int32), ("error", ctypes.c_int32),
                ("message", ctypes.c_char_p)]


#: MK_ASSET_* by value, as the names Python gives them.
ASSET_STATUS = {0: "unknown", 1: "reading", 2: "writing", 3: "completed", 4: "failed", 5: "cancelled"}


class MuxerSettings(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("layout", ctypes.c_int32), ("fragment_seconds", ctypes.c_double),
                # appended later (mk_remux only)
                ("tracks", ctypes.POINTER(ctypes.c_int32)), ("track_count", ctypes.c_int32),
                ("progress", PROGRESS), ("progress_user", ctypes.c_void_p),
                # appended later (mk_muxer_open, MP4 only)
                ("chunk_seconds", ctypes.c_double), ("movie_time_scale", ctypes.c_int64),
                ("reserved_moov_bytes", ctypes.c_int64), ("write_mfra", ctypes.c_int32),
                ("user_data", ctypes.c_void_p), ("user_data_size", ctypes.c_size_t),
                # appended later (HLS outputs)
                ("segment_format", ctypes.c_char_p),
                # appended later (mk_remux: tags, chapters and cover art)
                ("no_metadata", ctypes.c_int32), ("metadata_count", ctypes.c_int32),
                ("metadata", ctypes.POINTER(ctypes.c_char_p)),
                ("id3v2_version", ctypes.c_int32), ("write_id3v2", ctypes.c_int32),
                # appended later (mk_muxer_open and mk_remux: the muxer by name)
                ("format", ctypes.c_char_p),
                # appended later (WAV outputs: RIFF or RF64, MK_RF64_*)
                ("rf64", ctypes.c_int32),
                # appended later (mk_remux: the demuxer's warnings and tracks added while reading)
                ("warning", WARNING), ("warning_user", ctypes.c_void_p)]


class DecodeSettings(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("video_layout", ctypes.c_int32), ("audio_layout", ctypes.c_int32),
        ("wav", ctypes.c_int32), ("y4m", ctypes.c_int32), ("trim", ctypes.c_int32),
        ("autorotate", ctypes.c_int32), ("threads", ctypes.c_int32), ("backend", ctypes.c_char_p),
        # appended later (struct_size)
        ("progress", PROGRESS), ("progress_user", ctypes.c_void_p),
        ("sample_format", ctypes.c_int32), ("sample_rate", ctypes.c_int32), ("channels", ctypes.c_int32),
        ("channel_mask", ctypes.c_uint64), ("resample_quality", ctypes.c_int32), ("seek_seconds", ctypes.c_double),
        ("max_video_frames", ctypes.c_int64), ("max_audio_seconds", ctypes.c_double), ("async_video", ctypes.c_int32),
        # appended later (struct_size)
        ("reserved", ctypes.c_int32), ("full_range", ctypes.c_int32),
    ]


class SessionSettings(ctypes.Structure):
    """mk_async_decode_session_settings (mk_session_settings before 0.2)."""
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("backend", ctypes.c_char_p), ("threads", ctypes.c_int32),
        ("trim", ctypes.c_int32), ("recovery", ctypes.c_int32), ("max_failed_packets", ctypes.c_int32),
        ("max_rebuilds", ctypes.c_int32), ("queue_frames", ctypes.c_int32),
    ]


class SessionStats(ctypes.Structure):
    """mk_async_decode_session_stats (mk_session_stats before 0.2)."""
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("frames", ctypes.c_int64), ("recoveries", ctypes.c_int32),
        ("rebuilds", ctypes.c_int32), ("frames_lost", ctypes.c_int32), ("warnings", ctypes.c_int32),
        ("packets", ctypes.c_int64), ("invalidations", ctypes.c_int32),
    ]


class RecoveryInfo(ctypes.Structure):
    """mk_recovery_info."""
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("pts", ctypes.c_int64), ("position", ctypes.c_int64),
        ("rebuilt", ctypes.c_int32), ("frames_lost", ctypes.c_int32), ("status", ctypes.c_int32),
        ("message", ctypes.c_char_p),
    ]


SESSION_COMPLETION = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
#: mk_async_decode_session_callbacks' frame: (user, mk_frame * owned by the callee).
SESSION_FRAME = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
#: mk_async_decode_session_callbacks' recovery: (user, mk_recovery_info * borrowed for the call).
SESSION_RECOVERY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
#: mk_async_decode_session_callbacks' error: (user, status, message borrowed for the call).
SESSION_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p)
#: mk_async_decode_session_callbacks' end: (user).
SESSION_END = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class SessionCallbacks(ctypes.Structure):
    """mk_async_decode_session_callbacks."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("frame", SESSION_FRAME), ("recovery", SESSION_RECOVERY),
                ("error", SESSION_ERROR), ("end", SESSION_END)]


def _candidates() -> list[Path]:
    places: list[Path] = []
    env = os.environ.get("MEDIAKIT_LIBRARY")
    if env:
        places.append(Path(env))
    here = Path(__file__).resolve().parent
    places.append(here / "_lib" / "libmediakit.so")
    roots = []
    try:
        import importlib
        build_info = importlib.import_module("._build_info", __package__)  # written by `pip install` from a checkout
        roots.append(Path(build_info.CHECKOUT))
    except ImportError:
        pass
    roots.append(here.parents[2])  # the checkout, when imported from Bindings/python
    for root in roots:
        for config in ("release", "debug"):
            places.append(root / ".build" / config / "libmediakit.so")
    return places


def _load() -> tuple[ctypes.CDLL, str]:
    """The library and its path; ImportError naming every place looked in when none loads."""
    tried = []
    for path in _candidates():
        if not path.is_file():
            tried.append(f"{path} (not there)")
            continue
        try:
            lib = ctypes.CDLL(str(path))
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        lib.mk_abi_version.restype = ctypes.c_int32
        lib.mk_abi_version.argtypes = []
        abi = lib.mk_abi_version()
        if abi != ABI_VERSION:
            raise ImportError(f"{path} speaks MediaKit C ABI version {abi}; this mediakit package "
                              f"knows version {ABI_VERSION}. Install the matching package or library.")
        return lib, str(path)
    raise ImportError("libmediakit.so was not found. Set MEDIAKIT_LIBRARY to its path, or build the "
                      "checkout (`make build`) and `pip install ./Bindings/python`. Looked in: "
                      + "; ".join(tried))


lib, PATH = _load()


#: The functions that return an mk_status to check: errors.py, which builds on this module,
#: gives each its errcheck (a failure raises the MediaKitError subclass of its status).
CHECKED: list[str] = []


def _declare(name: str, restype: Any, argtypes: list[Any], check: bool = False) -> None:
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = argtypes
    if check:
        CHECKED.append(name)


P = ctypes.POINTER
_declare("mk_version", ctypes.c_char_p, [])
_declare("mk_last_error", ctypes.c_char_p, [])
_declare("mk_status_name", ctypes.c_char_p, [c_status])
_declare("mk_set_thread_limit", c_status, [ctypes.c_int32], True)
_declare("mk_thread_limit", ctypes.c_int32, [])
_declare("mk_plugins_load", c_status, [ctypes.c_char_p], True)
_declare("mk_plugin_count", ctypes.c_int32, [])
_declare("mk_plugin_get_info", c_status, [ctypes.c_int32, P(PluginInfo)], True)
_declare("mk_backend_count", ctypes.c_int32, [])
_declare("mk_backend_get_info", c_status, [ctypes.c_int32, P(BackendInfo)], True)
_declare("mk_backend_converts", c_status, [ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, P(ctypes.c_int32)], True)
_declare("mk_container_count", ctypes.c_int32, [])
_declare("mk_container_get_info", c_status, [ctypes.c_int32, P(ContainerInfo)], True)
_declare("mk_plugin_failure_count", ctypes.c_int32, [])
_declare("mk_plugin_failure", c_status, [ctypes.c_int32, P(ctypes.c_char_p), P(ctypes.c_char_p)], True)
_declare("mk_plugin_search_count", ctypes.c_int32, [])
_declare("mk_plugin_search_path", c_status, [ctypes.c_int32, P(ctypes.c_char_p)], True)
_declare("mk_demuxer_open", c_status, [P(c_handle), ctypes.c_char_p], True)
_declare("mk_demuxer_open_memory", c_status, [P(c_handle), ctypes.c_void_p, ctypes.c_size_t], True)
_declare("mk_demuxer_open_io", c_status, [P(c_handle), P(IO), ctypes.c_void_p], True)
_declare("mk_demuxer_open_as", c_status, [P(c_handle), ctypes.c_char_p, ctypes.c_char_p], True)
_declare("mk_demuxer_open_memory_as", c_status, [P(c_handle), ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p], True)
_declare("mk_demuxer_open_io_as", c_status, [P(c_handle), P(IO), ctypes.c_void_p, ctypes.c_char_p], True)
_declare("mk_demuxer_close", None, [P(c_handle)])
_declare("mk_audio_converter_default_settings", None, [P(AudioConverterSettings)])
_declare("mk_audio_converter_open", c_status, [P(c_handle), P(AudioFormat), P(AudioFormat), P(AudioConverterSettings)], True)
_declare("mk_audio_converter_open_track", c_status, [P(c_handle), c_handle, ctypes.c_int32, P(AudioFormat), P(AudioConverterSettings)], True)
_declare("mk_audio_converter_close", None, [P(c_handle)])
_declare("mk_audio_converter_output_format", c_status, [c_handle, P(AudioFormat)], True)
_declare("mk_audio_converter_push", c_status, [c_handle, P(ctypes.c_void_p), ctypes.c_int32], True)
_declare("mk_audio_converter_push_packet", c_status, [c_handle, c_handle], True)
_declare("mk_audio_converter_flush", c_status, [c_handle], True)
_declare("mk_audio_converter_reset", c_status, [c_handle], True)
_declare("mk_audio_converter_get_stats", c_status, [c_handle, P(AudioConverterStats)], True)
_declare("mk_audio_converter_output_buffer_size", c_status, [c_handle, ctypes.c_int64, P(ctypes.c_int64)], True)
_declare("mk_audio_converter_input_buffer_size", c_status, [c_handle, ctypes.c_int64, P(ctypes.c_int64)], True)
_declare("mk_audio_converter_fill", c_status, [c_handle, P(ctypes.c_void_p), ctypes.c_int32, AUDIO_INPUT, ctypes.c_void_p,
                                               P(ctypes.c_int32)], True)
_declare("mk_audio_converter_fill_packets", c_status, [c_handle, P(ctypes.c_void_p), ctypes.c_int32, AUDIO_PACKET_INPUT,
                                                       ctypes.c_void_p, P(ctypes.c_int32)], True)
_declare("mk_audio_converter_fill_demuxer", c_status, [c_handle, c_handle, P(ctypes.c_void_p), ctypes.c_int32, P(ctypes.c_int32)])
_declare("mk_audio_converter_read", c_status, [c_handle, P(ctypes.c_void_p), ctypes.c_int32, P(ctypes.c_int32)], True)
_declare("mk_encoder_default_settings", None, [P(EncoderSettings)])
_declare("mk_encoder_open", c_status, [P(c_handle), P(AudioFormat), P(EncoderSettings)], True)
_declare("mk_encoder_get_info", c_status, [c_handle, P(EncoderInfo)], True)
_declare("mk_encoder_applicable_bit_rates", c_status, [c_handle, P(ctypes.c_int64), ctypes.c_int32, P(ctypes.c_int32)], True)
_declare("mk_encoder_push", c_status, [c_handle, P(ctypes.c_void_p), ctypes.c_int32], True)
_declare("mk_encoder_flush", c_status, [c_handle], True)
_declare("mk_encoder_receive_packet", c_status, [c_handle, P(c_handle)], False)
_declare("mk_encoder_fill", c_status, [c_handle, P(c_handle), ctypes.c_int32, AUDIO_INPUT, ctypes.c_void_p, P(ctypes.c_int32)],
         True)
_declare("mk_encoder_close", None, [P(c_handle)])
_declare("mk_video_encoder_default_settings", None, [P(VideoEncoderSettings)])
_declare("mk_video_encoder_open", c_status, [P(c_handle), P(VideoEncoderSettings)], True)
_declare("mk_video_encoder_get_info", c_status, [c_handle, P(VideoEncoderInfo)], True)
_declare("mk_video_encoder_get_params", c_status, [c_handle, P(CodecParams)], True)
_declare("mk_video_encoder_send_frame", c_status, [c_handle, c_handle, ctypes.c_int32], True)
_declare("mk_video_encoder_send_planes", c_status, [c_handle, ctypes.c_int32, P(ctypes.c_void_p), P(ctypes.c_int64),
                                                    ctypes.c_int64, ctypes.c_int32], True)
_declare("mk_video_encoder_flush", c_status, [c_handle], True)
_declare("mk_video_encoder_receive_packet", c_status, [c_handle, P(c_handle)], False)
_declare("mk_video_encoder_close", None, [P(c_handle)])
_declare("mk_compression_session_open", c_status, [P(c_handle), P(VideoEncoderSettings), P(CompressionSessionCallbacks),
                                                   ctypes.c_void_p], True)
_declare("mk_compression_session_get_params", c_status, [c_handle, P(CodecParams)], True)
_declare("mk_compression_session_encode_frame", c_status, [c_handle, c_handle, ctypes.c_int64, ctypes.c_int32], True)
_declare("mk_compression_session_encode_planes", c_status, [c_handle, ctypes.c_int32, P(ctypes.c_void_p), P(ctypes.c_int64),
                                                            ctypes.c_int64, ctypes.c_int32], True)
_declare("mk_compression_session_complete_frames", c_status, [c_handle, ctypes.c_int64], True)
_declare("mk_compression_session_flush", c_status, [c_handle], True)
_declare("mk_compression_session_close", None, [P(c_handle)])
_declare("mk_writer_default_settings", None, [P(WriterSettings)])
_declare("mk_writer_open", c_status, [P(c_handle), ctypes.c_char_p, P(WriterSettings)], True)
_declare("mk_writer_write_video_planes", c_status, [c_handle, ctypes.c_int32, P(ctypes.c_void_p), P(ctypes.c_int64),
                                                    ctypes.c_int64, ctypes.c_int32], True)
_declare("mk_writer_write_video_frame", c_status, [c_handle, c_handle, ctypes.c_int32], True)
_declare("mk_writer_write_audio", c_status, [c_handle, P(ctypes.c_void_p), ctypes.c_int32], True)
_declare("mk_writer_finish", c_status, [c_handle], True)
_declare("mk_writer_cancel", c_status, [c_handle], True)
_declare("mk_writer_get_status", c_status, [c_handle, P(AssetStatus)], True)
_declare("mk_writer_end_track", c_status, [c_handle, ctypes.c_int32], True)
_declare("mk_writer_close", None, [P(c_handle)])
_declare("mk_transcode", c_status, [ctypes.c_char_p, ctypes.c_char_p, P(EncoderSettings)], True)
_declare("mk_transcode_default_settings", None, [P(TranscodeSettings)])
_declare("mk_transcode_with", c_status, [ctypes.c_char_p, ctypes.c_char_p, P(TranscodeSettings)], True)
_declare("mk_channel_layout", c_status, [ctypes.c_char_p, P(ctypes.c_uint64), P(ctypes.c_int32)], True)
_declare("mk_stream_parser_open", c_status, [P(c_handle), ctypes.c_int64], True)
_declare("mk_stream_parser_open_hint", c_status, [P(c_handle), ctypes.c_int64, ctypes.c_char_p], True)
_declare("mk_stream_parser_push", c_status, [c_handle, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int32], True)
_declare("mk_stream_parser_finish", c_status, [c_handle], True)
_declare("mk_stream_parser_next_event", c_status, [c_handle, P(StreamEventInfo)], True)
_declare("mk_stream_parser_seek", c_status, [c_handle, ctypes.c_double, P(ctypes.c_int64), P(ctypes.c_int64), P(ctypes.c_int32)], True)
_declare("mk_stream_parser_close", None, [P(c_handle)])
_declare("mk_demuxer_track_count", c_status, [c_handle, P(ctypes.c_int32)], True)
_declare("mk_demuxer_duration", c_status, [c_handle, P(ctypes.c_double)], True)
_declare("mk_demuxer_container", c_status, [c_handle, P(ctypes.c_char_p)], True)
_declare("mk_demuxer_presentation_offset", c_status, [c_handle, ctypes.c_int32, P(ctypes.c_int64)], True)
_declare("mk_demuxer_track", c_status, [c_handle, ctypes.c_int32, P(TrackInfo)], True)
_declare("mk_demuxer_read_packet", c_status, [c_handle, P(c_handle)], True)
_declare("mk_demuxer_read_track_packet", c_status, [c_handle, ctypes.c_int32, P(c_handle)], True)
_declare("mk_demuxer_seek", c_status, [c_handle, ctypes.c_double], True)
_declare("mk_demuxer_warning_count", c_status, [c_handle, P(ctypes.c_int32)], True)
_declare("mk_demuxer_warning", c_status, [c_handle, ctypes.c_int32, P(ctypes.c_char_p)], True)
_declare("mk_demuxer_get_status", c_status, [c_handle, P(AssetStatus)], True)
_declare("mk_demuxer_track_ended", c_status, [c_handle, ctypes.c_int32, P(ctypes.c_int32)], True)
_declare("mk_demuxer_cancel", c_status, [c_handle], True)
_declare("mk_demuxer_select_tracks", c_status, [c_handle, P(ctypes.c_int32), ctypes.c_int32], True)
_declare("mk_packet_get_info", c_status, [c_handle, P(PacketInfo)], True)
_declare("mk_packet_free", None, [P(c_handle)])
_declare("mk_decode_session_default_settings", None, [P(DecoderSettings)])
_declare("mk_decode_session_open", c_status, [P(c_handle), c_handle, ctypes.c_int32, P(DecoderSettings)], True)
_declare("mk_decode_session_close", None, [P(c_handle)])
_declare("mk_decode_session_send_packet", c_status, [c_handle, c_handle], True)
_declare("mk_decode_session_receive_frame", c_status, [c_handle, P(c_handle)], True)
_declare("mk_decode_session_reset", c_status, [c_handle], True)
_declare("mk_frame_get_info", c_status, [c_handle, P(FrameInfo)], True)
_declare("mk_frame_pack", c_status, [c_handle, ctypes.c_int32, ctypes.c_void_p, ctypes.c_size_t, P(ctypes.c_size_t)], True)
_declare("mk_frame_pack_scaled", c_status, [c_handle, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32,
                                            ctypes.c_void_p, ctypes.c_size_t, P(ctypes.c_size_t)], True)
_declare("mk_frame_view", c_status, [c_handle, ctypes.c_int32, P(FrameViewInfo)], True)
_declare("mk_pack_layout_name", ctypes.c_char_p, [ctypes.c_int32])
_declare("mk_frame_free", None, [P(c_handle)])
_declare("mk_orientation_from_matrix", c_status, [P(ctypes.c_int32), P(Orientation)], True)
_declare("mk_orientation_clockwise", c_status, [ctypes.c_int32, P(Orientation)], True)
_declare("mk_frame_orient", c_status, [c_handle, P(Orientation), P(c_handle)], True)
_declare("mk_packet_create", c_status, [P(c_handle), P(PacketInfo)], True)
_declare("mk_codec_params_default", None, [P(CodecParams)])
_declare("mk_decode_session_open_params", c_status, [P(c_handle), P(CodecParams), P(DecoderSettings)], True)
_declare("mk_muxer_default_settings", None, [P(MuxerSettings)])
_declare("mk_muxer_open", c_status, [P(c_handle), ctypes.c_char_p, P(MuxerSettings)], True)
_declare("mk_muxer_add_track", c_status, [c_handle, c_handle, ctypes.c_int32, P(ctypes.c_int32)], True)
_declare("mk_muxer_add_track_params", c_status, [c_handle, P(CodecParams), P(ctypes.c_int32)], True)
_declare("mk_muxer_write_packet", c_status, [c_handle, ctypes.c_int32, c_handle], True)
_declare("mk_muxer_finish", c_status, [c_handle], True)
_declare("mk_muxer_cancel", c_status, [c_handle], True)
_declare("mk_muxer_get_status", c_status, [c_handle, P(AssetStatus)], True)
_declare("mk_muxer_end_track", c_status, [c_handle, ctypes.c_int32], True)
_declare("mk_muxer_track_ended", c_status, [c_handle, ctypes.c_int32, P(ctypes.c_int32)], True)
_declare("mk_muxer_in_progress_path", c_status, [c_handle, P(ctypes.c_char_p)], True)
_declare("mk_muxer_close", None, [P(c_handle)])
_declare("mk_remux", c_status, [ctypes.c_char_p, ctypes.c_char_p, P(MuxerSettings)], True)
_declare("mk_decode_default_settings", None, [P(DecodeSettings)])
_declare("mk_decode_file", c_status, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, P(DecodeSettings)], True)
_declare("mk_decode_session_seek", c_status, [c_handle, c_handle, ctypes.c_double], True)
_declare("mk_decode_session_frame_index", c_status, [c_handle, c_handle, P(ctypes.c_int64), P(ctypes.c_int32), ctypes.c_int64,
                                             P(ctypes.c_int64)], True)
_declare("mk_decode_session_set_frame_index", c_status, [c_handle, P(ctypes.c_int64), P(ctypes.c_int32), ctypes.c_int64], True)
#: mk_frame_callback: (user, position, frame) -> status; the frame is the callback's to free.
FRAME_CALLBACK = ctypes.CFUNCTYPE(c_status, ctypes.c_void_p, ctypes.c_int64, c_handle)
_declare("mk_decode_session_frames_at", c_status, [c_handle, c_handle, P(ctypes.c_int64), ctypes.c_int64, FRAME_CALLBACK,
                                           ctypes.c_void_p], True)
_declare("mk_decode_session_frames_at_pts", c_status, [c_handle, c_handle, P(ctypes.c_int64), ctypes.c_int64, FRAME_CALLBACK,
                                               ctypes.c_void_p], True)
_declare("mk_decode_session_estimate_frames", c_status, [c_handle, c_handle, P(ctypes.c_int64), P(ctypes.c_int64), P(ctypes.c_int64)], True)
_declare("mk_async_decode_session_default_settings", None, [P(SessionSettings)])
_declare("mk_async_decode_session_open", c_status, [P(c_handle), c_handle, ctypes.c_int32, P(SessionSettings)], True)
_declare("mk_async_decode_session_read_frame", c_status, [c_handle, P(c_handle)], True)
_declare("mk_async_decode_session_seek", c_status, [c_handle, ctypes.c_double], True)
_declare("mk_async_decode_session_flush", c_status, [c_handle, SESSION_COMPLETION, ctypes.c_void_p], True)
_declare("mk_async_decode_session_get_stats", c_status, [c_handle, P(SessionStats)], True)
_declare("mk_async_decode_session_get_recovery", c_status, [c_handle, ctypes.c_int32, P(RecoveryInfo)], True)
_declare("mk_async_decode_session_close", None, [P(c_handle)])
_declare("mk_async_decode_session_start", c_status, [c_handle, P(SessionCallbacks), ctypes.c_void_p], True)
_declare("mk_async_decode_session_open_packets", c_status, [P(c_handle), c_handle, ctypes.c_int32, P(SessionSettings)], True)
_declare("mk_async_decode_session_open_params", c_status, [P(c_handle), P(CodecParams), P(SessionSettings)], True)
_declare("mk_async_decode_session_decode", c_status, [c_handle, c_handle], True)
_declare("mk_async_decode_session_wait_frames", c_status, [c_handle], True)
