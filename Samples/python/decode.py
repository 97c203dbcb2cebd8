"""Decode the first video track to NV12 and the first audio track to s16le PCM.

    python3 Samples/python/decode.py movie.mp4 out.nv12 out.pcm
    ffplay -f rawvideo -pixel_format nv12 -video_size WxH out.nv12
"""
import sys

import mediakit

src, video_out, audio_out = sys.argv[1:4]
with mediakit.open(src) as demuxer, open(video_out, "wb") as vf, open(audio_out, "wb") as af:
    video = next(t for t in demuxer.tracks if t.media_type == "video")
    audio = next(t for t in demuxer.tracks if t.media_type == "audio")
    decoders = {video.index: (mediakit.DecodeSession(video), vf), audio.index: (mediakit.DecodeSession(audio), af)}
    demuxer.select([video, audio])
    for packet in demuxer:
        decoder, out = decoders[packet.track]
        for frame in decoder.decode(packet):
            out.write(frame.to_numpy().tobytes())
    for decoder, out in decoders.values():
        for frame in decoder.flush():
            out.write(frame.to_numpy().tobytes())
        decoder.close()
print(f"{video.width}x{video.height} NV12 -> {video_out}; {audio.sample_rate} Hz {audio.channels} ch s16le -> {audio_out}")
