extension ContainerFormat {
    /// MPEG transport streams (ISO/IEC 13818-1) of 188-byte packets, and M2TS / Blu-ray
    /// streams of 192-byte packets (a 4-byte time code before each); ``MPEGTSDemuxer``.
    /// The probe wants the sync byte 0x47 at the start of five packets in a row (or of every
    /// packet of a smaller file), so a file that merely begins with 0x47 is not taken. Its
    /// timestamps are the stream's clock: a remux starts them at zero.
    public static let mpegts = ContainerFormat(
        name: "mpegts", description: "MPEG-TS / M2TS", extensions: ["ts", "m2ts", "mts", "m2t", "tsv", "tsa"],
        mimeTypes: ["video/mp2t", "video/MP2T", "audio/mp2t"],
        probe: { head, size in
            guard let sync = MPEGTSDemuxer.findSync(head, atEnd: size.map { $0 <= Int64(head.count) } ?? false) else { return 0 }
            // 5 packets or more in sync from the first byte: certain (FFmpeg scores such a file
            // 100 too); from further in (a stream cut mid-packet), or fewer packets in a file that
            // ends there, less so: below the signatures of the formats whose magic may hold 0x47.
            return sync.packets >= 5 && sync.start == 0 ? 100 : 40
        },
        makeDemuxer: { try MPEGTSDemuxer(source: $0) }, clockTimestamps: true)
}
