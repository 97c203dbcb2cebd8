"""Whole-file calls with progress: ``decode``, ``remux`` and ``transcode`` (mk_decode_file,
mk_remux, mk_transcode_with)."""

from __future__ import annotations

import ctypes
from fractions import Fraction
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from . import _ffi
from ._ffi import lib
from .errors import CancelledError, ETRUNCATED
from ._common import SCALE_FILTERS, Layout, PathLike, _PACK, _path, _trim_setting, _warn_truncated
from ._demux import Track
from ._mux import _muxer_settings, _rf64_mode
from ._audio import _QUALITY, _audio_format
from ._encode import _encoder_settings


#: A progress callback: called with (fraction done in [0, 1], done, total) now and then, on the
#: calling thread; returning False (not None) stops the call, as an exception raised in it does.
Progress = Callable[[float, int, int], Optional[bool]]


class _ProgressHook:
    """The C mk_progress_callback of a long call (remux, decode, transcode) over a Python
    callable. False from it cancels the call (CancelledError); an exception raised in it (a
    KeyboardInterrupt too) cancels it and is raised again once the call has cleaned up."""

    def __init__(self, fn: Optional[Progress]):
        self.fn = fn
        self.error: Optional[BaseException] = None
        self.c = _ffi.PROGRESS(self._call) if fn is not None else _ffi.PROGRESS()

    def _call(self, _user: Optional[int], fraction: float, done: int, total: int) -> int:
        if self.fn is None or self.error is not None:
            return 1
        try:
            return 1 if self.fn(fraction, done, total) is False else 0
        except BaseException as e:  # kept, raised again after the C call returns
            self.error = e
            return 1

    def run(self, call: Callable[[], int]) -> int:
        """Makes the C call; raises what the callback raised when that is why it stopped."""
        try:
            return call()
        except CancelledError:
            if self.error is not None:
                raise self.error from None
            raise


#: ffmpeg's names of frame rates (the fps filter's), as mk-transcode --fps takes them.
_RATE_NAMES = {"ntsc": Fraction(30000, 1001), "pal": Fraction(25), "film": Fraction(24), "ntsc_film": Fraction(24000, 1001)}


def _rate(fps: Union[int, float, Fraction, str]) -> Fraction:
    """A frame rate given as a number, a Fraction, "30000/1001", "29.97" or a name ("ntsc")."""
    if isinstance(fps, str):
        named = _RATE_NAMES.get(fps.strip().lower())
        try:
            rate = named if named is not None else Fraction(fps.strip())
        except ValueError:
            raise ValueError(f"fps {fps!r}: give a positive rate: 30, 30000/1001, 29.97 or ntsc, pal, film, ntsc_film") from None
    elif isinstance(fps, float):
        rate = Fraction(fps).limit_denominator(1001000)
    else:
        rate = Fraction(fps)
    if rate <= 0 or rate.numerator > 2**31 - 1 or rate.denominator > 2**31 - 1:
        raise ValueError(f"fps {fps!r} is not a positive rate")
    return rate


def _scale(scale: Union[str, tuple[int, int]]) -> tuple[int, int]:
    """(width, height) of "W:H" / "WxH" or a pair; -1 / -2 / 0 as ffmpeg's scale filter takes them."""
    if isinstance(scale, str):
        parts = scale.split(":" if ":" in scale else "x")
        try:
            if len(parts) != 2:
                raise ValueError
            w, h = int(parts[0]), int(parts[1])
        except ValueError:
            raise ValueError(f"scale {scale!r}: give W:H, each a whole number (-1 or -2 to keep the aspect ratio, 0 the input's)") from None
    else:
        w, h = (int(v) for v in scale)
    return w, h


def _metadata_entries(metadata: Mapping[str, str]) -> tuple[int, Any]:
    """(count, C array of "KEY=VALUE" strings) for the metadata fields of mk_muxer_settings and
    mk_transcode_settings; the array must live until the call that reads it returns."""
    bad = [k for k in metadata if not k or "=" in k]
    if bad:
        raise ValueError(f"metadata keys must be non-empty and without '=': {bad!r}")
    entries = [f"{k}={v}".encode() for k, v in metadata.items()]
    return len(entries), (ctypes.c_char_p * len(entries))(*entries)


def transcode(src: PathLike, dst: PathLike, codec: Optional[str] = None, bitrate: Optional[int] = None, *,
              quality: Optional[float] = None, sample_rate: Optional[int] = None, channels: Optional[int] = None,
              copy_video: bool = False, backend: Optional[str] = None, complexity: Optional[int] = None,
              application: Optional[str] = None, frame_duration: Optional[float] = None,
              progress: Optional[Progress] = None, audio_codec: Optional[str] = None, no_audio: bool = False,
              no_video: bool = False, video_codec: Optional[str] = None, crf: Optional[float] = None,
              qp: Optional[float] = None, video_bitrate: Optional[int] = None, preset: Optional[str] = None,
              profile: Optional[str] = None, gop: Optional[int] = None, bframes: Optional[int] = None,
              threads: int = 0, scale: Union[str, tuple[int, int], None] = None, scale_filter: Optional[str] = None,
              fps: Union[int, float, Fraction, str, None] = None, metadata: Optional[Mapping[str, str]] = None,
              copy_metadata: bool = True, id3v2_version: Optional[int] = None, write_id3v2: bool = False,
              rf64: Optional[str] = None) -> None:
    """Decodes the first audio track of `src` and encodes it into `dst`, like the mk-transcode
    sample: .m4a / .mp4 (AAC; MP3, Opus, FLAC with codec=), .flac, .mp3, .mka / .mkv / .webm (Opus,
    Vorbis ...). Gapless; written to a temporary file and renamed at the end. `complexity` (Opus
    0..10, FLAC 0..12), `application` ("audio", "voip", "lowdelay") and `frame_duration` (seconds,
    Opus) as for Encoder. `progress` is called now and then with (fraction, -1, -1); False from it
    stops (CancelledError, nothing written). A source cut short is transcoded as far as it goes
    and a TruncatedWarning names the offset of the cut.

    The tracks, as mk-transcode's options (C ``mk_transcode_settings``): `audio_codec` is
    `codec` by another name, or "copy" to copy the first audio track's packets; `no_audio`
    leaves the audio out. `video_codec` re-encodes the first video track (a codec: "h264",
    "hevc", "av1", "vp9", the encoder ``ffmpeg -c:v CODEC`` picks; an encoder's name: "libx264";
    or "copy", as `copy_video`) with `crf`, `qp`, `video_bitrate`, `preset`, `profile`, `gop`,
    `bframes` and `threads` as ``ffmpeg -crf -qp -b:v -preset -profile:v -g -bf -threads`` (libx264
    at threads=1 gives ffmpeg's packets); `fps` (30, Fraction(30000, 1001), "29.97", "ntsc")
    puts the pictures on a constant rate first, then `scale` ("W:H" or (W, H): -1 keeps the
    aspect ratio, -2 too with an even size, 0 the input's side) sizes them with `scale_filter`
    ("bicubic", ffmpeg's default; "bilinear", "lanczos" ...): the pictures of
    ``ffmpeg -vf fps=R,scale=W:H``. Without `video_codec` or `copy_video` (and with `no_video`)
    the video is left out. Options that contradict each other raise InvalidArgumentError
    naming them, and nothing is written.

    Tags, chapters and cover art are copied as ``remux`` copies them (as ``ffmpeg
    -map_metadata 0 -map_chapters 0``); copy_metadata=False copies none, metadata={KEY: VALUE}
    sets container tags after the copy (an empty VALUE removes the tag), id3v2_version=3 writes
    an MP3's tags as ID3v2.3 and write_id3v2=True adds a WAV's or AIFF's ID3v2 chunk (mk-transcode
    --no-metadata, --metadata, --id3v2-version, --write-id3v2; C mk_transcode_settings).
    rf64="auto" or "always" writes a WAV output as ``ffmpeg -rf64`` does (mk-transcode --rf64; see
    Muxer); "never" or None: RIFF."""
    if audio_codec is not None and codec is not None:
        raise ValueError("codec and audio_codec name the same thing: give one")
    copy_audio = audio_codec is not None and audio_codec.lower() == "copy"
    audio_name = None if copy_audio else (audio_codec or codec)
    s = _encoder_settings(audio_name, bitrate, quality, sample_rate, channels, complexity, application, frame_duration,
                          backend=backend)
    hook = _ProgressHook(progress)
    t = _ffi.TranscodeSettings()
    lib.mk_transcode_default_settings(ctypes.byref(t))
    t.encoder = ctypes.pointer(s)
    t.copy_video = int(bool(copy_video))
    t.progress = hook.c
    t.copy_audio, t.no_audio, t.no_video = int(copy_audio), int(bool(no_audio)), int(bool(no_video))
    t.video_codec = video_codec.encode() if video_codec is not None else None
    t.crf = -1.0 if crf is None else float(crf)
    t.qp = -1.0 if qp is None else float(qp)
    t.video_bit_rate = int(video_bitrate or 0)
    t.preset = preset.encode() if preset is not None else None
    t.profile = profile.encode() if profile is not None else None
    t.gop_size = -1 if gop is None else int(gop)
    t.max_b_frames = -1 if bframes is None else int(bframes)
    t.threads = int(threads)
    if scale is not None:
        t.scale_width, t.scale_height = _scale(scale)
    if scale_filter is not None:
        if scale_filter.lower() not in SCALE_FILTERS:
            raise ValueError(f"unknown scale_filter {scale_filter!r}: one of {', '.join(SCALE_FILTERS)}")
        t.scale_filter = SCALE_FILTERS[scale_filter.lower()]
    if fps is not None:
        rate = _rate(fps)
        t.fps_num, t.fps_den = rate.numerator, rate.denominator
    if id3v2_version not in (None, 3, 4):
        raise ValueError(f"id3v2_version is 3 or 4 (or None: 4), not {id3v2_version!r}")
    t.no_metadata = 0 if copy_metadata else 1
    t.id3v2_version = id3v2_version or 0
    t.write_id3v2 = 1 if write_id3v2 else 0
    t.rf64 = _rf64_mode(rf64)
    if metadata:
        t.metadata_count, t.metadata = _metadata_entries(metadata)
    if hook.run(lambda: int(lib.mk_transcode_with(_path(src), _path(dst), ctypes.byref(t)))) == ETRUNCATED:
        _warn_truncated()


def decode(path: PathLike, audio_out: Optional[PathLike] = None, video_out: Optional[PathLike] = None, *,
           pixel_format: str = "nv12", sample_format: str = "s16", wav: bool = False, y4m: bool = False,
           trim: Union[bool, str] = True, autorotate: bool = True, threads: int = 0, backend: Optional[str] = None,
           progress: Optional[Progress] = None, sample_rate: Optional[int] = None, channels: Optional[Layout] = None,
           resample_quality: str = "medium", seek: Optional[float] = None, max_video_frames: Optional[int] = None,
           max_audio_seconds: Optional[float] = None, async_video: bool = False, full_range: bool = False) -> None:
    """Decodes the first audio track to `audio_out` (raw PCM or WAV) and the first video
    track to `video_out` (raw pictures or Y4M), like the mk-decode sample. `trim` is
    as for DecodeSession: "gapless" (default, or True), "ffmpeg" or "none" (or False).

    `pixel_format` is any picture layout of ``Frame.to_numpy``: "nv12" (default), "i420",
    "p010le" (10-bit biplanar), "bgra", "rgb24" ... (the bytes of ``ffmpeg -pix_fmt``; Y4M
    writes I420). `full_range` keeps full-range pictures full range in NV12 / I420 (as
    VideoToolbox's 420YpCbCr8BiPlanarFullRange and ``ffmpeg -vf scale=out_range=full``;
    mk-decode --range full); by default they are brought to limited range, as ``ffmpeg -pix_fmt``.

    mk-decode's choices: `sample_format` ("u8", "s16", "s24", "s32", "f32", "f64"; for raw
    output also "s8", "s16be", "s24be", "s32be", "f32be", "f64be", "s24in32hi", "s24in32lo"), `sample_rate`
    and `channels` (a layout name or a count, mixed as ffmpeg -ac mixes) with `resample_quality`;
    `seek` (seconds, sample-accurate as ffmpeg -ss T -i), `max_video_frames`,
    `max_audio_seconds`; `async_video` decodes a lone video track on a thread of its own.

    A file cut short is decoded as far as it goes (the outputs are written, as ffmpeg's)
    and a TruncatedWarning names the offset of the cut."""
    if audio_out is None and video_out is None:
        raise ValueError("give audio_out, video_out or both")
    if pixel_format not in _PACK or pixel_format in ("s16", "f32"):
        raise ValueError(f"unknown pixel_format {pixel_format!r}: one of {', '.join(k for k in _PACK if k not in ('s16', 'f32'))}")
    if resample_quality not in _QUALITY:
        raise ValueError(f"unknown resample_quality {resample_quality!r}: low, medium or high")
    s = _ffi.DecodeSettings()
    lib.mk_decode_default_settings(ctypes.byref(s))
    s.video_layout = _PACK[pixel_format]
    if sample_format in ("s16", "f32"):
        s.audio_layout = _PACK[sample_format]
    if sample_format not in ("s16", "f32") or sample_rate is not None or channels is not None:
        f = _audio_format(sample_format, sample_rate or 0, channels, open_ended=True)
        s.sample_format, s.sample_rate, s.channels, s.channel_mask = f.sample_format, f.sample_rate, f.channels, f.channel_mask
    s.resample_quality = _QUALITY[resample_quality]
    if seek is not None:
        s.seek_seconds = float(seek)
    s.max_video_frames = int(max_video_frames or 0)
    s.max_audio_seconds = float(max_audio_seconds or 0)
    s.async_video = int(async_video)
    s.full_range = int(bool(full_range))
    s.wav, s.y4m, s.autorotate, s.threads = int(wav), int(y4m), int(autorotate), int(threads)
    s.trim = _trim_setting(trim)
    s.backend = backend.encode() if backend else None
    hook = _ProgressHook(progress)
    s.progress = hook.c
    status = hook.run(lambda: int(lib.mk_decode_file(_path(path), _path(audio_out) if audio_out is not None else None,
                                                     _path(video_out) if video_out is not None else None,
                                                     ctypes.byref(s))))
    if status == ETRUNCATED:
        _warn_truncated()


def remux(src: PathLike, dst: PathLike, faststart: bool = False, fragment: Optional[float] = None,
          hybrid: Optional[float] = None, *, tracks: Optional[Sequence[Union[int, Track]]] = None,
          progress: Optional[Progress] = None, segment_format: Optional[str] = None,
          metadata: Optional[Mapping[str, str]] = None, copy_metadata: bool = True,
          id3v2_version: Optional[int] = None, write_id3v2: bool = False, format: Optional[str] = None,
          rf64: Optional[str] = None, warning: Optional[Callable[[str], None]] = None) -> None:
    """Copies the tracks of `src` (any file ``open`` reads) into a new file at `dst` without
    decoding, like the mk-remux sample. The output's format follows `dst`'s extension, or
    ``format`` names the muxer (as mk-remux --format: "matroska", "mp4", a plugin's "ffmpeg:avi"
    ...; NotFoundError naming it for a name no muxer has, before anything is written): MP4
    (.mp4, .m4a, .m4v, .mov), Matroska / WebM (.mkv, .mka, .webm), Ogg (.ogg, .oga, .opus),
    FLAC (.flac), MP3 (.mp3), WAV (.wav), AIFF (.aiff, .aif, .aifc: PCM, stored in the
    format's byte order, so an AIFF -> WAV copy keeps every sample), CAF (.caf: AAC, ALAC,
    FLAC, Opus or PCM; an edit list or encoder delay becomes the packet table's priming),
    MPEG-TS (.ts, as ffmpeg -c copy writes it) or HLS (.m3u8: a VOD playlist and MPEG-TS
    segments seg0.ts ... beside it, cut at key frames about every `fragment` seconds, 2 by default;
    segment_format="fmp4": fragmented MP4 segments seg0.m4s ... after an init.mp4 instead, "ts"
    or None: MPEG-TS); UnsupportedError for a codec the output cannot carry.

    tracks: the source tracks to copy (indexes or Tracks), in that order; None: every audio and
        video track, and the subtitle and data tracks the output format carries.
    faststart=True puts the moov at the front; fragment=SECONDS writes a fragmented MP4
    (a fragment about every SECONDS, playable up to the last complete one after a crash);
    hybrid=SECONDS writes fragmented and turns the file progressive when done. `progress` is
    called after each packet with (fraction, packets written, packets in all; -1 and a fraction
    of 0 when the input does not say how many it holds: MPEG-TS, Matroska, raw streams); False from it
    stops (CancelledError). The target name is only written when the whole file is complete:
    a failure or a cancel leaves nothing there. A source cut short is copied as far as it goes
    (every packet before the cut, as ffmpeg's stream copy) and a TruncatedWarning names the
    offset of the cut.

    The input's tags, chapters and cover art are copied into what the output holds (as
    ``ffmpeg -map_metadata 0 -map_chapters 0``); copy_metadata=False copies none (mk-remux
    --no-metadata). metadata={KEY: VALUE} sets container tags after the copy (mk-remux
    --metadata KEY=VALUE; an empty VALUE removes the tag). id3v2_version=3 writes an MP3's tags
    as ID3v2.3 (TYER / TDAT, ISO-8859-1 or UTF-16 text, as ``ffmpeg -id3v2_version 3``), 4 or
    None as ID3v2.4; write_id3v2=True also writes a WAV's or AIFF's tags, cover art and chapters
    as an ID3v2 chunk after the samples (mk-remux --id3v2-version, --write-id3v2); other
    formats refuse them (InvalidArgumentError). rf64="auto" or "always" writes a WAV output as
    ``ffmpeg -rf64`` does (mk-remux --rf64; see Muxer); other formats refuse it.

    `warning` is called, once the output is written and before ``remux`` returns, with each
    warning as a string (mk-remux prints them): the damage the demuxer read past (an MPEG-TS
    continuity-counter jump, lost sync, scrambled packets ...: what ``Demuxer.warnings`` lists
    for the source) and each track the source added while it was read (an MPEG-TS PMT that adds
    a stream, from a pipe), whose packets are not in the output. None: they are not told.
    """
    if id3v2_version not in (None, 3, 4):
        raise ValueError(f"id3v2_version is 3 or 4 (or None: 4), not {id3v2_version!r}")
    s = _muxer_settings(faststart, fragment, hybrid)
    s.id3v2_version = id3v2_version or 0
    s.write_id3v2 = 1 if write_id3v2 else 0
    s.rf64 = _rf64_mode(rf64)
    if segment_format is not None:
        s.segment_format = segment_format.encode()
    if format is not None:
        s.format = format.encode()
    s.no_metadata = 0 if copy_metadata else 1
    if metadata:
        s.metadata_count, s.metadata = _metadata_entries(metadata)
    chosen = [t.index if isinstance(t, Track) else int(t) for t in tracks] if tracks is not None else None
    if chosen is not None:
        if not chosen:
            raise ValueError("tracks=[] copies nothing: give at least one track, or None for the default choice")
        s.tracks = (ctypes.c_int32 * len(chosen))(*chosen)
        s.track_count = len(chosen)
    hook = _ProgressHook(progress)
    s.progress = hook.c
    told: list[str] = []   # given to `warning` after the C call, where an exception can go up
    c_warning = _ffi.WARNING(lambda _user, message: told.append(message.decode("utf-8", "replace"))) if warning else None
    if c_warning is not None:
        s.warning = c_warning
    status = hook.run(lambda: int(lib.mk_remux(_path(src), _path(dst), ctypes.byref(s))))
    if warning is not None:
        for message in told:
            warning(message)
    if status == ETRUNCATED:
        _warn_truncated()
