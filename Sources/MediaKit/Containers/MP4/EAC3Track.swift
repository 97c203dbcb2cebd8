/// An E-AC-3 track on its way into MP4 (ETSI TS 102 366 annex F): the `dec3` box of its
/// `ec-3` sample entry, gathered from the frames as FFmpeg's mov muxer gathers it
/// (movenc.c `handle_eac3`), and its samples of 6 audio blocks.
///
/// - The `dec3` describes the first independent substream and its dependent substreams, read
///   from the packets until substream 0 comes again; its data rate is the highest frame rate
///   of the whole stream (kbit/s), so the final box is known at the end (a fragmented `moov`,
///   written first, states the first packet's).
/// - A packet is an independent frame with the dependent frames that follow it (the framing
///   of every MediaKit demuxer, as FFmpeg's parser joins them). Frames of fewer than 6 blocks
///   (256 samples each) are joined into one sample of 6 blocks, with the first one's
///   timestamps and the sum of their durations; an incomplete group at the end is dropped, as
///   FFmpeg drops it.
/// - A packet that is not a frame is dropped before the track's first sample (as FFmpeg drops
///   them) and an error after it.
struct EAC3Track {
    /// One independent substream as the `dec3` states it (annex F.6.2).
    struct Substream: Equatable {
        var sampleRateCode: Int
        var bitstreamID: Int
        var bitstreamMode: Int
        var audioCodingMode: Int
        var hasLFE: Bool
        var dependents = 0
        var channelLocations = 0
    }

    /// The highest bit rate of the frames seen, kbit/s.
    private(set) var dataRate = 0
    private(set) var substream: Substream?
    /// True once substream 0 came again: the description is complete.
    private var described = false
    private var group: Packet?
    private var groupBlocks = 0

    /// The `dec3` payload (annex F.6: data_rate, num_ind_sub 0, then the substream's fields
    /// with its 3 reserved bits; chan_loc when it has dependent substreams); nil before a
    /// frame was read. For a stream without dependent substreams these are FFmpeg 5.1's bytes
    /// (which writes 5 reserved bits and cuts the box to whole bytes: a layout that only
    /// differs with dependent substreams, fixed in later FFmpeg).
    var dec3: [UInt8]? {
        guard let s = substream else { return nil }
        let rate = min(dataRate, 8191)
        var b: [UInt8] = [UInt8(truncatingIfNeeded: rate >> 5), UInt8(truncatingIfNeeded: (rate & 0x1F) << 3)]   // num_ind_sub: 0 (one substream)
        b.append(UInt8(truncatingIfNeeded: s.sampleRateCode << 6 | s.bitstreamID << 1))
        b.append(UInt8(truncatingIfNeeded: s.bitstreamMode << 4 | s.audioCodingMode << 1 | (s.hasLFE ? 1 : 0)))
        if s.dependents == 0 {
            b.append(0)
        } else {
            b.append(UInt8(truncatingIfNeeded: min(s.dependents, 15) << 1 | (s.channelLocations >> 8) & 1))
            b.append(UInt8(truncatingIfNeeded: s.channelLocations))
        }
        return b
    }

    /// Takes track `ti`'s next packet (`hasSamples`: the track has a sample written); returns
    /// the sample to write: the packet itself (6 blocks), a group of them completed, or nil
    /// (a group waiting for more blocks, a bad packet dropped before the first sample).
    /// - Throws: `.invalidData` for a packet that is not a frame after the first sample, a
    ///   frame that does not fit the group of 6 blocks, a packet whose frames after the first
    ///   are not dependent frames; `.unsupported` for a second independent substream (FFmpeg
    ///   refuses them too).
    mutating func take(_ packet: Packet, track ti: Int, hasSamples: Bool) throws -> Packet? {
        let data = packet.data
        guard let h = try read(data, track: ti) else {
            if !hasSamples { return nil }
            throw MediaError(.invalidData, "track \(ti) (eac3): the packet at dts \(packet.dts) (\(data.count) bytes) does not start with an AC-3 / E-AC-3 syncframe")
        }
        if groupBlocks == 0 && h.blocks == 6 { return packet }
        guard groupBlocks + h.blocks <= 6 else {
            throw MediaError(.invalidData, "track \(ti) (eac3): a frame of \(h.blocks) blocks at dts \(packet.dts) follows \(groupBlocks) blocks; an MP4 sample holds frames of 6 blocks in all")
        }
        var joined = packet
        if let first = group {
            joined = first
            joined.data += data
            joined.duration += packet.duration
        }
        groupBlocks += h.blocks
        guard groupBlocks == 6 else {
            group = joined
            return nil
        }
        group = nil
        groupBlocks = 0
        return joined
    }

    /// Reads the `dec3` facts from a packet (its rate; its substreams until the description is
    /// complete) and returns its first frame's header; nil when it does not start with a frame.
    mutating func read(_ data: [UInt8], track ti: Int) throws -> AC3Header? {
        guard let h = AC3Header(data) else { return nil }
        dataRate = max(dataRate, h.bitRate / 1000)
        if !described { try describe(h, data, track: ti) }
        return h
    }

    /// Reads the `dec3` facts from a packet whose first frame is `h`.
    private mutating func describe(_ h: AC3Header, _ data: [UInt8], track ti: Int) throws {
        if h.streamType != 1 {
            guard h.substreamID == 0 else {
                throw MediaError(.unsupported, "track \(ti) (eac3): independent substream \(h.substreamID); MediaKit writes the dec3 of one independent substream (as FFmpeg does)")
            }
            if substream != nil {
                described = true
                return
            }
        } else if h.substreamID != 0 {
            throw MediaError(.unsupported, "track \(ti) (eac3): dependent substream \(h.substreamID) before an independent one")
        }
        var s = Substream(sampleRateCode: h.sampleRateCode, bitstreamID: h.bitstreamID, bitstreamMode: h.bitstreamMode,
                          audioCodingMode: h.audioCodingMode, hasLFE: h.hasLFE)
        var offset = h.frameSize
        while offset < data.count {
            guard let d = AC3Header(data, at: offset), d.isEAC3, d.streamType == 1 else {
                throw MediaError(.invalidData, "track \(ti) (eac3): byte \(offset) of a \(data.count)-byte packet is not a dependent E-AC-3 frame")
            }
            s.dependents += 1
            // FFmpeg's mapping of the custom channel map (bits 6 to 10 from the end) or, without
            // one, the coding mode.
            s.channelLocations |= d.channelMap.map { ($0 >> 5) & 0x1F } ?? d.audioCodingMode
            offset += d.frameSize
        }
        substream = s
    }
}
