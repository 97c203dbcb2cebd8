"""``Encoder`` (mk_encoder): PCM in, encoded packets out."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

if TYPE_CHECKING:  # annotations only (typing_extensions comes with mypy): no import at run time
    from ._common import Array

from . import _ffi
from ._ffi import lib
from .errors import OK, EAGAIN, MediaKitError
from ._common import Layout, _Owned, _text
from ._demux import Packet
from ._audio import _audio_format, _pcm_input, _pcm_pointers


_APPLICATIONS = {None: 0, "audio": 1, "voip": 2, "lowdelay": 3}


def _encoder_settings(codec: Optional[str], bitrate: Optional[int], quality: Optional[float], sample_rate: Optional[int],
                      channels: Optional[int], complexity: Optional[int] = None, application: Optional[str] = None,
                      frame_duration: Optional[float] = None, backend: Optional[str] = None) -> _ffi.EncoderSettings:
    if application not in _APPLICATIONS:
        raise ValueError(f"application is one of audio, voip, lowdelay, not {application!r}")
    s = _ffi.EncoderSettings()
    lib.mk_encoder_default_settings(ctypes.byref(s))
    s.codec = codec.encode() if codec else None
    s.bit_rate = int(bitrate or 0)
    s.has_quality, s.quality = (1, float(quality)) if quality is not None else (0, 0.0)
    s.complexity = -1 if complexity is None else int(complexity)
    s.application = _APPLICATIONS[application]
    s.frame_duration = float(frame_duration or 0)
    s.sample_rate, s.channels = int(sample_rate or 0), int(channels or 0)
    s.backend = backend.encode() if backend else None
    return s


class Encoder(_Owned):
    """Encodes PCM into one compressed audio stream (AAC, Opus, Vorbis, MP3, FLAC) through the
    plugins' encoders, converting the PCM to what the encoder takes first::

        enc = mediakit.Encoder("aac", "f32", 48000, "stereo", bitrate=128_000)
        packets = enc.encode(samples)        # numpy (frames, channels), or bytes
        packets += enc.flush()
        enc.extradata                        # the magic cookie (AudioSpecificConfig ...)

    `sample_format`, `rate` and `layout` describe the PCM given to encode() (as for
    AudioConverter); `sample_rate` and `channels` the coded stream (None: the input's when the
    encoder takes them). A rate or channel count the encoder refuses raises UnsupportedError naming
    what it accepts; with ``adjustable_sample_rate=True`` (AudioConverter's
    kAudioConverterEncodeAdjustableSampleRate) a `sample_rate` it does not take is replaced by
    the closest one it takes instead (the lowest above, else the highest below: MP3 asked for
    96000 codes at 48000, Opus asked for 44100 at 48000) and the PCM resampled to it.

    ``applicable_bit_rates`` lists the bit rates the codec takes where it has a fixed set (MP3,
    at the coded rate); ``max_packet_size`` bounds the packets where the codec does (every
    codec but Vorbis)."""

    _free = staticmethod(lib.mk_encoder_close)
    _what = "encoder"

    def __init__(self, codec: str, sample_format: str, rate: int, layout: Layout, *, bitrate: Optional[int] = None,
                 quality: Optional[float] = None, sample_rate: Optional[int] = None, channels: Optional[int] = None,
                 complexity: Optional[int] = None, application: Optional[str] = None,
                 frame_duration: Optional[float] = None, backend: Optional[str] = None, adjustable_sample_rate: bool = False):
        fmt = _audio_format(sample_format, rate, layout)
        s = _encoder_settings(codec, bitrate, quality, sample_rate, channels, complexity, application, frame_duration, backend)
        s.adjustable_sample_rate = int(bool(adjustable_sample_rate))
        h = ctypes.c_void_p()
        lib.mk_encoder_open(ctypes.byref(h), ctypes.byref(fmt), ctypes.byref(s))
        super().__init__(h)
        #: The sample format encode() takes.
        self.in_format: str = sample_format
        #: True when the last fill() stopped early because its source returned NO_DATA_NOW.
        self.starved: bool = False
        self._carry: list[Packet] = []   # packets a fill() whose source raised had returned
        self._in_channels: int = fmt.channels

    def _info(self) -> _ffi.EncoderInfo:
        i = _ffi.EncoderInfo(struct_size=ctypes.sizeof(_ffi.EncoderInfo))
        lib.mk_encoder_get_info(self._handle(), ctypes.byref(i))
        return i

    @property
    def codec(self) -> str:
        """The codec coded ("aac", "opus" ...)."""
        return _text(self._info().codec)

    @property
    def sample_rate(self) -> int:
        """The coded stream's rate."""
        return int(self._info().sample_rate)

    @property
    def channels(self) -> int:
        """The coded stream's channels."""
        return int(self._info().channels)

    @property
    def frame_size(self) -> int:
        """Samples per channel the codec codes at a time (0: any)."""
        return int(self._info().frame_size)

    @property
    def encoder_delay(self) -> int:
        """Priming samples at the start of the decoded output, in time_base ticks."""
        return int(self._info().encoder_delay)

    @property
    def input_samples(self) -> int:
        """Samples per channel the encoder itself was given so far (at its input rate)."""
        return int(self._info().input_samples)

    @property
    def applicable_bit_rates(self) -> list[int]:
        """The bit rates (bits per second) the encoder may be asked for where the codec has a
        fixed set, lowest first: MP3's at the coded rate (ISO/IEC 11172-3 / 13818-3). Empty when
        it takes any rate in its backend's range (``mediakit.Backend.bit_rate_range``)."""
        count = ctypes.c_int32()
        lib.mk_encoder_applicable_bit_rates(self._handle(), None, 0, ctypes.byref(count))
        rates = (ctypes.c_int64 * max(1, count.value))()
        lib.mk_encoder_applicable_bit_rates(self._handle(), rates, count.value, ctypes.byref(count))
        return [int(r) for r in rates[:count.value]]

    @property
    def max_packet_size(self) -> Optional[int]:
        """Bytes of the largest packet the encoder can give where the codec bounds it (MP3: a
        padded frame at its bit rate; AAC: 768 a channel; FLAC: a verbatim frame; ALAC: its
        cookie's maxFrameBytes; Opus: 1275 a frame with the packet's framing; PCM: a packet);
        None for Vorbis."""
        return int(self._info().max_packet_size) or None

    @property
    def time_base(self) -> tuple[int, int]:
        """The packets' time base (numerator, denominator)."""
        i = self._info()
        return int(i.time_base_num), int(i.time_base_den)

    @property
    def extradata(self) -> bytes:
        """The magic cookie: AudioSpecificConfig, OpusHead, Vorbis headers, FLAC STREAMINFO."""
        i = self._info()
        return ctypes.string_at(i.extradata, i.extradata_size) if i.extradata_size else b""

    def _packets(self) -> list[Packet]:
        out: list[Packet] = []
        while True:
            h = ctypes.c_void_p()
            if lib.mk_encoder_receive_packet(self._handle(), ctypes.byref(h)) != OK:
                return out
            out.append(Packet(h))

    def encode(self, samples: Union[Array, bytes, bytearray, memoryview]) -> list[Packet]:
        """Encodes PCM in the input format (a numpy array: (frames, channels) interleaved or
        (channels, frames) planar; or bytes of interleaved samples); returns the packets ready."""
        ptrs, frames, keep = _pcm_pointers(samples, self.in_format, self._in_channels, convert=True)
        lib.mk_encoder_push(self._handle(), ptrs, frames)
        del keep
        return self._packets()

    def flush(self) -> list[Packet]:
        """Ends the input: returns the last packets."""
        lib.mk_encoder_flush(self._handle())
        return self._packets()

    def fill(self, packets: int, source: Callable[[int], Optional[Union[Array, bytes, bytearray, memoryview]]]) -> list[Packet]:
        """The pull model (AudioConverterFillComplexBuffer encoding, C mk_encoder_fill): returns
        up to `packets` packets, calling ``source(wanted)`` for PCM in the input format as needed
        (`wanted`: the encoder's frame size): samples as encode() takes them, None (or an empty
        array) at the end of the input, or ``mediakit.NO_DATA_NOW``: the packets ready so far are
        returned (``starved`` is True) and the state kept, so that the packets of every call
        together equal encode() of the whole input and flush(). Fewer than `packets` only then or
        at the end. An encoder is fed by fill() or by encode(), not both. An exception raised by
        `source` comes out of it; the packets ready before it are returned by the next fill()."""
        if packets < 0:
            raise ValueError(f"packets is a count, not {packets}")
        held: list[object] = []
        failed: list[BaseException] = []

        callback = _pcm_input(source, self.in_format, self._in_channels, held, failed, convert=True)
        head, self._carry = self._carry[:packets], self._carry[packets:]
        out = (ctypes.c_void_p * max(1, packets))()
        filled = ctypes.c_int32(0)
        status = 0
        try:
            status = lib.mk_encoder_fill(self._handle(), out, packets - len(head), callback, None, ctypes.byref(filled))
        except MediaKitError:
            if not failed:
                raise
        got = [Packet(ctypes.c_void_p(out[i])) for i in range(filled.value)]
        if failed:
            self._carry = head + got + self._carry
            raise failed[0]
        #: True when the last fill() stopped early because its source returned NO_DATA_NOW.
        self.starved = status == EAGAIN
        return head + got
