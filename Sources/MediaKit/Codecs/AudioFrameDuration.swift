/// How many samples (per channel) one compressed audio packet holds, as FFmpeg's
/// `av_get_audio_frame_duration2` tells it for the codecs MP4 carries from other containers:
/// the packet's bytes over the frame size for PCM, the frame header's count for MPEG audio,
/// the codec's fixed frame for AAC (1024), AC-3 (1536), AMR-NB (160) and AMR-WB (320).
///
/// FFmpeg's stream copy needs it to put an audio packet's time on the sample grid when the
/// source counts coarser ticks than samples (``SampleGridRescaler``).
enum AudioFrameDuration {
    /// The samples of `packet` of a stream described by `p`; `stated` (the packet's duration
    /// already in samples, nil when unknown) for the other codecs; 0 when nothing tells.
    static func samples(_ p: CodecParameters, packet: [UInt8], stated: Int64?) -> Int64 {
        if let pcm = PCMCodec(p.codec), p.channels > 0 {
            return Int64(packet.count / (pcm.bytes * p.channels))
        }
        switch p.codec {
        case "aac": return 1024
        case "ac3": return 1536
        case "amr_nb": return 160
        case "amr_wb": return 320
        case "mp1", "mp2", "mp3":
            if let h = MPEGAudioHeader(packet) { return Int64(h.samplesPerFrame) }
            return p.codec == "mp1" ? 384 : 1152
        default: return max(0, stated ?? 0)
        }
    }
}
