"""``AudioConverter`` (mk_audio_converter): sample format, rate and channel layout conversion."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union, cast

if TYPE_CHECKING:  # annotations only (typing_extensions comes with mypy): no import at run time
    from ._common import Array

from . import _ffi
from ._ffi import lib
from .errors import MediaKitError, OK, EINVAL, EAGAIN
from ._common import Layout, _Owned, _closed, _trim_setting
from ._demux import Packet, Track, _check_read

try:  # numpy is optional: without it, arrays are bytes and planes are memoryviews.
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the environment
    _np = None  # type: ignore[assignment]


# The sample types by name (Swift's SampleFormat.typeName) and their interleaved MK_SAMPLES_*
# code; the planar code is the next one up (5 up for the first five). Beside the little-endian
# types: s8, big-endian (ffmpeg's s16be ... f64be, AIFF's) and 24 bits in 32, aligned high
# (an s32 with a zero low byte) or low (sign-extended).
_SAMPLE_CODES = {"u8": 1, "s16": 2, "s32": 3, "f32": 4, "f64": 5, "s24": 11, "s8": 13, "s16be": 15, "s24be": 17,
                 "s32be": 19, "f32be": 21, "f64be": 23, "s24in32hi": 25, "s24in32lo": 27}
_SAMPLE_NAMES = {v: k for k, v in _SAMPLE_CODES.items()}
_SAMPLE_WIDTHS = {"u8": 1, "s8": 1, "s16": 2, "s16be": 2, "s24": 3, "s24be": 3, "s32": 4, "s32be": 4, "f32": 4,
                  "f32be": 4, "f64": 8, "f64be": 8, "s24in32hi": 4, "s24in32lo": 4}
# numpy holds packed 24-bit samples as 3 bytes (u1) per sample.
_NUMPY_TYPES = {"u8": "u1", "s8": "i1", "s16": "<i2", "s16be": ">i2", "s24": "u1", "s24be": "u1", "s32": "<i4",
                "s32be": ">i4", "f32": "<f4", "f32be": ">f4", "f64": "<f8", "f64be": ">f8", "s24in32hi": "<i4",
                "s24in32lo": "<i4"}


def _planar_code(base: str) -> int:
    """The MK_SAMPLES_* code of the planar form of sample type `base`."""
    code = _SAMPLE_CODES[base]
    return code + 5 if code <= 5 else code + 1


def _code_name(code: int) -> str:
    """The sample format name ("s16", "f32p", "s16bep" ...) of an MK_SAMPLES_* code."""
    if code in _SAMPLE_NAMES:
        return _SAMPLE_NAMES[code]
    return _SAMPLE_NAMES[code - 5 if 6 <= code <= 10 else code - 1] + "p"
_QUALITY = {"low": 0, "medium": 1, "high": 2}
#: kAudioConverterPrimeMethod's names and their MK_PRIME_* values.
_PRIME_METHODS = {"normal": 0, "pre": 1, "none": 2}


class _NoDataNow(bytes):
    """The type of ``NO_DATA_NOW``: an empty ``bytes`` (so that it fits where a source's samples
    are typed), told apart from the end of the stream by identity."""

    _instance: Optional["_NoDataNow"] = None

    def __new__(cls) -> "_NoDataNow":
        if cls._instance is None:
            cls._instance = super().__new__(cls, b"")
        return cls._instance

    def __repr__(self) -> str:
        return "mediakit.NO_DATA_NOW"


#: What a pull source (AudioConverter.fill, AudioConverter.fill_packets, Encoder.fill) returns
#: when it has no input for now (iOS's input proc returning an error with zero packets): the
#: fill returns what it made so far and the converter keeps its state for the next call.
NO_DATA_NOW = _NoDataNow()


def _audio_format(sample_format: str, rate: int, layout: Optional[Layout], *, open_ended: bool = False) -> _ffi.AudioFormat:
    """The C mk_audio_format for a sample format name ("s16", "f32", "f32p" planar ...), a rate
    and a layout (a name such as "stereo" or "5.1", a channel count, or None when open)."""
    planar = sample_format.endswith("p") and sample_format[:-1] in _SAMPLE_CODES
    base = sample_format[:-1] if planar else sample_format
    if base not in _SAMPLE_CODES:
        raise ValueError(f"unknown sample format {sample_format!r}: one of {', '.join(_SAMPLE_CODES)} (+ 'p' for planar)")
    code = _planar_code(base) if planar else _SAMPLE_CODES[base]
    mask, channels = ctypes.c_uint64(0), ctypes.c_int32(0)
    if layout is not None:
        lib.mk_channel_layout(str(layout).encode(), ctypes.byref(mask), ctypes.byref(channels))
    elif not open_ended:
        raise ValueError("a channel layout is needed (a name such as 'stereo' or a channel count)")
    return _ffi.AudioFormat(struct_size=ctypes.sizeof(_ffi.AudioFormat), sample_format=code, sample_rate=int(rate or 0),
                            channels=channels.value, channel_mask=mask.value)


def _pcm_pointers(samples: Union[Array, bytes, bytearray, memoryview], sample_format: str, channels: int, *,
                  convert: bool) -> tuple["ctypes.Array[ctypes.c_void_p]", int, object]:
    """The C plane pointers and frame count of PCM given to AudioConverter.convert or
    Encoder.encode, and the object to keep alive while the C call reads them. `samples` is a
    numpy array in `sample_format` ((frames, channels) interleaved, (channels, frames) planar;
    converted to its dtype when `convert`, else TypeError for another dtype than the same in
    the other byte order) or bytes of interleaved samples."""
    planar = sample_format.endswith("p") and sample_format[:-1] in _SAMPLE_CODES
    base = sample_format[:-1] if planar else sample_format
    width = _SAMPLE_WIDTHS[base]
    per = 3 if width == 3 else 1           # numpy holds packed 24-bit samples as 3 bytes each
    if _np is not None and isinstance(samples, _np.ndarray):
        dtype = _np.dtype(_NUMPY_TYPES[base])
        arr = _np.ascontiguousarray(samples, dtype=dtype if convert else None)
        if arr.dtype != dtype and arr.dtype.newbyteorder("=") == dtype.newbyteorder("="):
            # The same type in the other byte order (numpy's concatenate gives native order):
            # the same values, reordered losslessly.
            arr = arr.astype(dtype)
        if arr.dtype != dtype:
            raise TypeError(f"the input is {sample_format} samples ({_NUMPY_TYPES[base]}); the array is {arr.dtype}")
        if planar:
            if arr.ndim != 2 or arr.shape[0] != channels:
                raise ValueError(f"planar input is a ({channels}, frames) array; got shape {arr.shape}")
            return (ctypes.c_void_p * channels)(*[arr[c].ctypes.data for c in range(channels)]), arr.shape[1] // per, arr
        return (ctypes.c_void_p * 1)(arr.ctypes.data), arr.size // (channels * per), arr
    if planar:
        raise TypeError("planar input is a (channels, frames) numpy array")
    buf = ctypes.create_string_buffer(bytes(samples))
    return (ctypes.c_void_p * 1)(ctypes.addressof(buf)), (len(buf) - 1) // (width * channels), buf


def _pcm_input(source: Callable[[int], Any], sample_format: str, channels: int, held: list[object],
               failed: list[BaseException], *, convert: bool) -> Any:
    """The C input callback (``_ffi.AUDIO_INPUT``) of a pull over `source`, which is called with
    the frames wanted and returns PCM (see ``_pcm_pointers``), None or empty at the end, or
    ``NO_DATA_NOW`` (MK_EAGAIN: nothing for now). The PCM given last stays in `held` (the C side
    reads it until the next call); an exception `source` raises goes into `failed` and the
    callback returns -1, for the caller to raise once the C call returns."""
    def pull(_user: Optional[int], wanted: int, planes: Any) -> int:
        try:
            samples = source(int(wanted))
            if samples is NO_DATA_NOW:
                return EAGAIN
            if samples is None or len(samples) == 0:
                return 0
            ptrs, count, owner = _pcm_pointers(samples, sample_format, channels, convert=convert)
            held[:] = [ptrs, owner]
            planes[0] = ctypes.cast(ptrs, ctypes.c_void_p).value
            return count
        except BaseException as e:  # kept, raised again once the C call returns
            failed.append(e)
            return -1

    return _ffi.AUDIO_INPUT(pull)


#: The most frames one mk_audio_converter_fill_demuxer call takes (its count is an int32).
_MAX_FILL = 2**31 - 1


class AudioConverter(_Owned):
    """Converts PCM between sample formats, channel layouts and rates (MediaKit's
    AudioConverter: libswresample's rounding, ``ffmpeg -ac 2``'s downmix, a band-limited
    resampler), or decodes a track's packets and converts them (``for_track``).

    Sample formats: "u8", "s16", "s24" (packed 3 bytes), "s32", "f32", "f64"
    (little-endian); "s16be", "s24be", "s32be", "f32be", "f64be" (big-endian, as AIFF and
    ``ffmpeg -f s16be`` hold them: numpy's ">i2" ...); "s8"; "s24in32hi" and "s24in32lo"
    (24 bits in an int32, aligned high: an s32 with a zero low byte, or low: sign-extended);
    each with a "p" suffix for planar. numpy arrays go in and come out: interleaved as (frames, channels),
    planar as (channels, frames); an input array in the source format is used without a copy.

        conv = mediakit.AudioConverter("s16", 44100, "stereo", "f32", 48000, "mono")
        out = conv.convert(samples)          # (n, 1) float32
        tail = conv.flush()

    ``prime_leading`` / ``prime_trailing`` input frames are dropped at the start / end (an
    encoder's priming and padding; they still feed the filter). ``reset()`` starts a new stream
    (after a seek); ``input_frames``, ``output_frames`` and ``latency`` count a PCM converter's work.

    Channels: by default mixed by position as ``ffmpeg -ac`` mixes; ``channel_map`` (one entry
    per output channel: the input channel it is, or None / -1 for silence;
    kAudioConverterChannelMap) or ``mix_matrix`` (one row of gains per output channel, one gain
    per input channel) say it instead.

    ``prime_method`` ("normal", "pre" or "none"; kAudioConverterPrimeMethod) says how the
    resampler's edges are handled: "normal" (default) takes the input before the start as
    silence with no latency at the output; "pre" takes the first ``prime_info[0]`` input frames
    as the filter's history, not output (frames from before a cut); "none" (live input) lets
    nothing wait, the output delayed by ``prime_info[1]`` input frames. ``prime_info`` is
    (leading, trailing): the input frames the filter reads before and after an output's time.
    ``output_buffer_size(input_bytes)`` / ``input_buffer_size(output_bytes)`` size buffers for
    one ``convert`` (kAudioConverterPropertyCalculateOutputBufferSize / ...InputBufferSize).
    """

    _free = staticmethod(lib.mk_audio_converter_close)
    _what = "audio converter"

    def __init__(self, in_format: str, in_rate: int, in_layout: Optional[Layout], out_format: str, out_rate: int,
                 out_layout: Optional[Layout], *, quality: str = "medium", dither: bool = False,
                 _track: Optional[Track] = None, trim: Union[bool, str] = True, prime_leading: int = 0,
                 prime_trailing: int = 0, channel_map: Optional[Sequence[Optional[int]]] = None,
                 mix_matrix: Optional[Sequence[Sequence[float]]] = None, prime_method: str = "normal", threads: int = 0):
        if quality not in _QUALITY:
            raise ValueError(f"unknown quality {quality!r}: low, medium or high")
        if prime_method not in _PRIME_METHODS:
            raise ValueError(f"unknown prime_method {prime_method!r}: normal, pre or none")
        if channel_map is not None and mix_matrix is not None:
            raise ValueError("give channel_map or mix_matrix, not both")
        if threads < 0:
            raise ValueError(f"threads is 0 (every core) or a count, not {threads}")
        s = _ffi.AudioConverterSettings()
        lib.mk_audio_converter_default_settings(ctypes.byref(s))
        s.quality, s.dither, s.trim = _QUALITY[quality], int(bool(dither)), _trim_setting(trim)
        s.prime_leading, s.prime_trailing = int(prime_leading), int(prime_trailing)
        s.prime_method = _PRIME_METHODS[prime_method]
        s.threads = int(threads)
        to = _audio_format(out_format, out_rate, out_layout, open_ended=_track is not None)
        # The C API reads out_channels entries (x in_channels gains): the shapes are checked here.
        n_in = _audio_format(in_format, in_rate, in_layout).channels if _track is None else 0
        if channel_map is not None and len(channel_map) != to.channels:
            raise ValueError(f"channel_map has {len(channel_map)} entries; the output has {to.channels} channels")
        if mix_matrix is not None:
            if len(mix_matrix) != to.channels:
                raise ValueError(f"mix_matrix has {len(mix_matrix)} rows; the output has {to.channels} channels")
            bad = next((i for i, row in enumerate(mix_matrix) if len(row) != n_in), None)
            if bad is not None:
                raise ValueError(f"row {bad} of mix_matrix has {len(mix_matrix[bad])} gains; the input has {n_in} channels")
        # Borrowed by the open call only (the library copies them).
        if channel_map is not None:
            entries = [-1 if c is None else int(c) for c in channel_map]
            cmap = (ctypes.c_int32 * max(1, len(entries)))(*entries)
            s.channel_map = ctypes.cast(cmap, ctypes.POINTER(ctypes.c_int32))
        if mix_matrix is not None:
            gains = [float(g) for row in mix_matrix for g in row]
            matrix = (ctypes.c_double * max(1, len(gains)))(*gains)
            s.mix_matrix = ctypes.cast(matrix, ctypes.POINTER(ctypes.c_double))
        h = ctypes.c_void_p()
        if _track is None:
            src = _audio_format(in_format, in_rate, in_layout)
            lib.mk_audio_converter_open(ctypes.byref(h), ctypes.byref(src), ctypes.byref(to), ctypes.byref(s))
        else:
            if _track._demuxer is None or _track._demuxer.closed:
                raise _closed("demuxer this track belongs to")
            lib.mk_audio_converter_open_track(ctypes.byref(h), _track._demuxer._handle(), _track.index, ctypes.byref(to), ctypes.byref(s))
        super().__init__(h)
        #: The track whose packets it decodes (for_track), else None.
        self.track: Optional[Track] = _track
        #: The input's sample format.
        self.in_format: str = in_format
        #: True when the last fill() / fill_packets() stopped early because its source returned
        #: NO_DATA_NOW (False after a full fill or the end of the stream).
        self.starved: bool = False
        self._carry: Optional[Array] = None   # frames a fill() whose source raised had written
        self._in_channels: int = 0 if _track is not None else (src.channels or 1)

    @classmethod
    def for_track(cls, track: Track, sample_format: str = "f32", rate: Optional[int] = None, layout: Optional[Layout] = None, *,
                  quality: str = "medium", dither: bool = False, trim: Union[bool, str] = True, threads: int = 0) -> "AudioConverter":
        """A converter that takes the compressed packets of an audio `track` (AAC, MP3, Opus,
        Vorbis, FLAC ...), decodes them with the track's trims and converts them; `rate` and
        `layout` left None keep the decoded ones. `threads`: the decoder's threads (0: as many as
        the thread limit allows; 1 spares a short file the start and join of a decoder's
        threads, which cost more than decoding a second of FLAC)."""
        if not isinstance(track, Track):
            raise TypeError(f"for_track needs a mediakit.Track, got {type(track).__name__}")
        return cls("", 0, None, sample_format, rate or 0, layout, quality=quality, dither=dither, _track=track, trim=trim,
                   threads=threads)

    def reset(self) -> None:
        """Forgets the stream (after a seek, or for another one): what waits and what the
        resampler holds are dropped; converting (also after flush()) starts a new stream."""
        lib.mk_audio_converter_reset(self._handle())

    def _stats(self) -> _ffi.AudioConverterStats:
        st = _ffi.AudioConverterStats(struct_size=ctypes.sizeof(_ffi.AudioConverterStats))
        lib.mk_audio_converter_get_stats(self._handle(), ctypes.byref(st))
        return st

    @property
    def input_frames(self) -> int:
        """PCM converter: frames given since it was made or reset."""
        return int(self._stats().input_frames)

    @property
    def output_frames(self) -> int:
        """PCM converter: frames converted since it was made or reset."""
        return int(self._stats().output_frames)

    @property
    def latency(self) -> int:
        """PCM converter: input frames that wait, before flush(), for later input."""
        return int(self._stats().latency)

    @property
    def prime_info(self) -> tuple[int, int]:
        """PCM converter: (leading, trailing): the input frames its resampling filter reads
        before and after an output's time (kAudioConverterPrimeInfo); (0, 0) without a rate change."""
        st = self._stats()
        return int(st.prime_leading_frames), int(st.prime_trailing_frames)

    @property
    def max_output_packet_size(self) -> int:
        """PCM converter: bytes of one output frame (PCM's packet; per plane when planar)."""
        return int(self._stats().max_output_packet_size)

    def output_buffer_size(self, input_bytes: int) -> int:
        """PCM converter: the most bytes of output (per plane when planar) one ``convert`` of
        `input_bytes` bytes of input (per plane when planar) can give: as many frames without a
        rate change, else ceil(frames * out_rate / in_rate)."""
        out = ctypes.c_int64()
        lib.mk_audio_converter_output_buffer_size(self._handle(), int(input_bytes), ctypes.byref(out))
        return int(out.value)

    def input_buffer_size(self, output_bytes: int) -> int:
        """PCM converter: the bytes of input (per plane when planar) one ``convert`` needs to give
        `output_bytes` bytes of output, once the converter holds its latency: as many frames
        without a rate change, else ceil(frames * in_rate / out_rate)."""
        out = ctypes.c_int64()
        lib.mk_audio_converter_input_buffer_size(self._handle(), int(output_bytes), ctypes.byref(out))
        return int(out.value)

    @property
    def output_format(self) -> Optional[tuple[str, int, int]]:
        """(sample format, rate, channels) written; None for a track converter before its first frame."""
        f = _ffi.AudioFormat(struct_size=ctypes.sizeof(_ffi.AudioFormat))
        if lib.mk_audio_converter_output_format(self._handle(), ctypes.byref(f)) != OK:
            return None
        return (_code_name(f.sample_format), int(f.sample_rate), int(f.channels))

    def _take(self) -> Array:
        """Everything converted so far, as one numpy array (bytes without numpy)."""
        n = ctypes.c_int32(0)
        if lib.mk_audio_converter_read(self._h, None, 0, ctypes.byref(n)) != OK or n.value == 0:
            n.value = 0

        def read(ptrs: "ctypes.Array[ctypes.c_void_p]", frames: int) -> int:
            got = ctypes.c_int32(0)
            if frames:
                lib.mk_audio_converter_read(self._h, ptrs, frames, ctypes.byref(got))
            return got.value

        return self._output(n.value, read)

    def _output(self, frames: int, produce: Callable[["ctypes.Array[ctypes.c_void_p]", int], int]) -> Array:
        """Room for `frames` output frames in the output format, filled by `produce(planes, frames)`
        (which returns the frames it wrote), as one numpy array of those (bytes without numpy)."""
        fmt, _, channels = self.output_format or ("f32", 0, 1)
        planar = fmt.endswith("p") and fmt != "p"
        base = fmt[:-1] if planar else fmt
        width = _SAMPLE_WIDTHS[base]
        if _np is None:
            bufs = [ctypes.create_string_buffer(frames * width * (1 if planar else channels)) for _ in range(channels if planar else 1)]
            ptrs = (ctypes.c_void_p * len(bufs))(*[ctypes.addressof(b) for b in bufs])
            done = produce(ptrs, frames)
            size = done * width * (1 if planar else channels)
            return cast(Any, b"".join(b.raw[:size] for b in bufs))
        dtype = _np.dtype(_NUMPY_TYPES[base])
        per = 3 if width == 3 else 1
        out = _np.empty((channels, frames * per) if planar else (frames, channels * per), dtype=dtype)
        if planar:
            ptrs = (ctypes.c_void_p * channels)(*[out[c].ctypes.data for c in range(channels)])
        else:
            ptrs = (ctypes.c_void_p * 1)(out.ctypes.data)
        done = produce(ptrs, frames)
        return out[:, :done * per] if planar else out[:done]

    def _layout(self) -> tuple[bool, int, int]:
        """(planar, numpy elements per sample (3 for packed 24-bit, else 1), bytes per frame) of the output."""
        fmt, _, channels = self.output_format or ("f32", 0, 1)
        planar = fmt.endswith("p") and fmt[:-1] in _SAMPLE_CODES
        width = _SAMPLE_WIDTHS[fmt[:-1] if planar else fmt]
        return planar, 3 if width == 3 else 1, width * channels

    def _frames_of(self, arr: Array) -> int:
        """The frames in an output array (or bytes without numpy)."""
        planar, per, frame_bytes = self._layout()
        if _np is None:
            return len(cast(Any, arr)) // frame_bytes
        return int(arr.shape[1]) // per if planar else int(arr.shape[0])

    def _split(self, arr: Array, n: int) -> tuple[Array, Array]:
        """The first `n` frames of an output array and the rest."""
        planar, per, frame_bytes = self._layout()
        if _np is None:
            b = cast(Any, arr)
            return cast(Any, b[:n * frame_bytes]), cast(Any, b[n * frame_bytes:])
        if planar:
            return arr[:, :n * per], arr[:, n * per:]
        return arr[:n], arr[n:]

    def _join(self, first: Array, second: Array) -> Array:
        """`first` then `second` (output arrays, or bytes without numpy)."""
        if _np is None:
            return cast(Any, bytes(cast(Any, first)) + bytes(cast(Any, second)))
        joined: Array = _np.concatenate([first, second], axis=1 if self._layout()[0] else 0)
        return joined

    def _pull(self, frames: int, call: Callable[[Any, "ctypes.Array[ctypes.c_void_p]", int, ctypes.c_int32], int],
              failed: list[BaseException]) -> Array:
        """One pull through `call(handle, planes, count, filled)` (mk_audio_converter_fill or
        _fill_packets), after what a failed pull kept. Frames written before a failure are never
        lost: when the source raised, they are kept for the next call and the exception raised."""
        if frames < 0:
            raise ValueError(f"frames is a count, not {frames}")
        h = self._handle()
        head: Optional[Array] = None
        carry: Optional[Array] = self._carry
        if carry is not None and self._frames_of(carry) > 0:
            head, self._carry = self._split(carry, frames)
        got = 0 if head is None else self._frames_of(head)
        status = [0]

        def run(ptrs: "ctypes.Array[ctypes.c_void_p]", count: int) -> int:
            filled = ctypes.c_int32(0)
            try:
                status[0] = call(h, ptrs, count, filled)
            except MediaKitError:
                if not failed:
                    raise
            return filled.value

        out = self._output(frames - got, run)
        if head is not None:
            out = self._join(head, out)
        if failed:
            self._carry = out if self._carry is None else self._join(out, self._carry)
            raise failed[0]
        self.starved = status[0] == EAGAIN
        return out

    def fill(self, frames: int, source: Callable[[int], Optional[Union[Array, bytes, bytearray, memoryview]]]) -> Array:
        """The pull model (iOS's AudioConverterFillComplexBuffer, C mk_audio_converter_fill):
        returns `frames` output frames, calling ``source(wanted)`` for input as it needs it.
        `source` returns samples in the input format, as convert() takes them (about `wanted`
        frames: fewer or more is fine), None (or an empty array) at the end of the stream, or
        ``mediakit.NO_DATA_NOW`` when it has nothing for now: fill() then returns what it
        converted so far (maybe nothing; ``starved`` is True) and keeps its state, so that the
        arrays of every call together equal one convert() of the whole input and flush(). The
        result is shorter than `frames` only then or at the end of the stream. Output waiting
        from convert() comes first. An exception raised by `source` stops the fill and comes out
        of it; the frames converted before it are not lost: the next fill() returns them first."""
        if self.track is not None:
            raise MediaKitError(EINVAL, "this converter takes the track's packets: use fill_packets()", "fill")
        held: list[object] = []              # the input given last: the C side reads it until the next call
        failed: list[BaseException] = []

        callback = _pcm_input(source, self.in_format, self._in_channels, held, failed, convert=False)
        return self._pull(frames, lambda h, ptrs, count, filled: int(lib.mk_audio_converter_fill(
            h, ptrs, count, callback, None, ctypes.byref(filled))), failed)

    def fill_packets(self, frames: int, source: Callable[[int], Union[Packet, None, "_NoDataNow"]]) -> Array:
        """The pull model for compressed input (a track converter, C
        mk_audio_converter_fill_packets; AudioConverterFillComplexBuffer fed packets with their
        descriptions): returns `frames` decoded and converted frames, calling ``source(wanted)``
        for the track's packets as it needs them: a ``Packet`` (the converter decodes a copy: the
        packet stays usable), None at the end of the stream, or ``mediakit.NO_DATA_NOW``: the
        frames decoded so far are returned (``starved`` is True) and the state kept, so that the
        arrays of every call together equal convert_packet() of the same packets and flush().
        Exceptions raised by `source` come out of it, the frames before them kept for the next call."""
        if self.track is None:
            raise MediaKitError(EINVAL, "this converter takes PCM: use fill()", "fill_packets")
        failed: list[BaseException] = []

        def pull(_user: Optional[int], wanted: int, slot: Any) -> int:
            try:
                packet = source(int(wanted))
                if packet is NO_DATA_NOW:
                    return EAGAIN
                if packet is None:
                    return 0
                if not isinstance(packet, Packet):
                    raise TypeError(f"fill_packets' source returns a mediakit.Packet, None or NO_DATA_NOW, not {type(packet).__name__}")
                info = _ffi.PacketInfo(struct_size=ctypes.sizeof(_ffi.PacketInfo))
                lib.mk_packet_get_info(packet._handle(), ctypes.byref(info))
                copy = ctypes.c_void_p()
                lib.mk_packet_create(ctypes.byref(copy), ctypes.byref(info))   # the library frees the copy
                slot[0] = copy.value
                return 1
            except BaseException as e:  # kept, raised again once the C call returns
                failed.append(e)
                return -1

        callback = _ffi.AUDIO_PACKET_INPUT(pull)
        if self.output_format is None:       # decode up to the first frame: the output format sizes the arrays
            self._pull(0, lambda h, ptrs, count, filled: int(lib.mk_audio_converter_fill_packets(
                h, None, 0, callback, None, ctypes.byref(filled))), failed)
            if self.starved:
                return self._output(0, lambda ptrs, count: 0)
        return self._pull(frames, lambda h, ptrs, count, filled: int(lib.mk_audio_converter_fill_packets(
            h, ptrs, count, callback, None, ctypes.byref(filled))), failed)

    def fill_track(self, frames: int) -> Array:
        """The pull model with the packets read by the library (a track converter, C
        mk_audio_converter_fill_demuxer): returns `frames` decoded and converted frames, the
        track's packets read from its demuxer (where that demuxer stands: its reads of the track
        move on); fewer only at the end of the track (an empty array after it). No Python runs
        per packet, so it is the fast way to decode a track whole. A file cut short gives what
        precedes the cut, with a ``TruncatedWarning``."""
        if self.track is None:
            raise MediaKitError(EINVAL, "this converter takes PCM: use fill()", "fill_track")
        if not 0 <= frames <= _MAX_FILL:
            raise ValueError(f"frames is a count up to {_MAX_FILL}, not {frames}")
        if self.output_format is None:       # decode up to the first frame: the output format sizes the arrays
            self._fill_demuxer(None, 0)
        return self._output(frames, self._fill_demuxer)

    def skip_track(self, frames: int) -> int:
        """Decodes and drops the next `frames` frames of the track (as ``fill_track`` reads them:
        a skip to a sample); returns how many were dropped (fewer at the end of the track)."""
        if self.track is None:
            raise MediaKitError(EINVAL, "this converter takes PCM: use fill()", "skip_track")
        if frames < 0:
            raise ValueError(f"frames is a count, not {frames}")
        done = 0
        while done < frames:                 # the C count is an int32
            n = min(frames - done, _MAX_FILL)
            got = self._fill_demuxer(None, n)
            done += got
            if got < n:
                break
        return done

    def _fill_demuxer(self, planes: Optional["ctypes.Array[ctypes.c_void_p]"], frames: int) -> int:
        """One mk_audio_converter_fill_demuxer call: the frames written to `planes` (dropped when
        None); a cut file's warning issued, an error raised."""
        track = cast(Track, self.track)
        demuxer = track._demuxer
        if demuxer is None or demuxer.closed:
            raise _closed("demuxer this track belongs to")
        demuxer._busy()
        filled = ctypes.c_int32(0)
        status = int(lib.mk_audio_converter_fill_demuxer(self._handle(), demuxer._handle(), planes, frames, ctypes.byref(filled)))
        if status != OK:
            _check_read(status, "mk_audio_converter_fill_demuxer")
        return int(filled.value)

    def convert(self, samples: Union[Array, bytes, bytearray, memoryview]) -> Array:
        """Converts PCM (a numpy array in the source format: (frames, channels) interleaved or
        (channels, frames) planar; or bytes of interleaved samples) and returns what can be
        output so far. A C-contiguous array of the source's dtype is read in place."""
        h = self._handle()
        if self.track is not None:
            raise MediaKitError(EINVAL, "this converter takes the track's packets: use convert_packet()", "convert")
        ptrs, frames, keep = _pcm_pointers(samples, self.in_format, self._in_channels, convert=False)
        lib.mk_audio_converter_push(h, ptrs, frames)
        del keep
        return self._take()

    def convert_packet(self, packet: Packet) -> Array:
        """Decodes one packet of the track and returns the PCM that can be output so far."""
        if not isinstance(packet, Packet):
            raise TypeError(f"convert_packet() takes a mediakit.Packet, got {type(packet).__name__}")
        lib.mk_audio_converter_push_packet(self._handle(), packet._handle())
        return self._take()

    def flush(self) -> Array:
        """Ends the input: returns the rest (the resampler's tail, a track's delayed frames)."""
        lib.mk_audio_converter_flush(self._handle())
        return self._take()
