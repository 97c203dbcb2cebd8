/// The facts of MPEG transport streams (ISO/IEC 13818-1) that the reader (``MPEGTSDemuxer``)
/// and the writer (``MPEGTSMuxer``) share: the packet size, the 90 kHz clock, the section
/// CRC, the stream types and the channel configurations of Opus in TS (ETSI TS 102 366-ish, as
/// FFmpeg writes and reads them).
enum MPEGTS {
    /// Bytes in a transport packet.
    static let packetSize = 188
    /// The PES timestamps' clock: 90 kHz.
    static let clock: Int64 = 90000
    /// The sync byte that starts every packet.
    static let syncByte: UInt8 = 0x47

    /// Stream types of the PMT (ISO/IEC 13818-1 table 2-34, ATSC A/52 for AC-3 / E-AC-3).
    enum StreamType {
        static let mpeg1Video: UInt8 = 0x01, mpeg2Video: UInt8 = 0x02
        static let mpeg1Audio: UInt8 = 0x03, mpeg2Audio: UInt8 = 0x04
        static let privateData: UInt8 = 0x06
        static let adtsAAC: UInt8 = 0x0F, latmAAC: UInt8 = 0x11
        /// Metadata in PES (ISO/IEC 13818-1 2.12.9): HLS's timed ID3 with a metadata descriptor.
        static let metadata: UInt8 = 0x15
        static let h264: UInt8 = 0x1B, hevc: UInt8 = 0x24
        static let ac3: UInt8 = 0x81, eac3: UInt8 = 0x87
    }

    /// CRC-32/MPEG-2 (polynomial 0x04C11DB7, no reflection) of `b`: 0 over a section with its CRC.
    static func crc32(_ b: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in b {
            crc ^= UInt32(truncatingIfNeeded: byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? crc << 1 ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }

    /// Opus in TS: for each channel count 1...8 (index count - 1) the OpusHead mapping table of
    /// the Vorbis channel order (mapping family 1) that the extension descriptor's channel
    /// configuration byte stands for, and its stream and coupled-stream counts (index: count).
    static let opusChannelMaps: [[UInt8]] = [[0], [0, 1], [0, 2, 1], [0, 1, 2, 3], [0, 4, 1, 2, 3], [0, 4, 1, 2, 3, 5],
                                             [0, 4, 1, 2, 3, 5, 6], [0, 6, 1, 2, 3, 4, 5, 7]]
    static let opusStreamCounts = [1, 1, 1, 2, 2, 3, 4, 4, 5], opusCoupledCounts = [1, 0, 1, 1, 2, 2, 2, 3, 3]
}
