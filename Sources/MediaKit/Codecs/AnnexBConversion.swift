/// What the MP4 and Matroska muxers do with an H.264 or HEVC track given in Annex B form (start
/// codes: raw `.h264` / `.hevc` streams, MPEG-TS), to store it as those containers do, as
/// FFmpeg's mov and matroska muxers store it (`ffmpeg -c copy`):
///
/// - the configuration record (avcC, hvcC) built from the parameter sets of the extradata
///   (``AVCConfigurationRecord``, ``HEVCConfigurationRecord``), or, when the extradata is
///   empty, from those of the track's first packet (the SPS and PPS, or VPS, SPS and PPS, as
///   FFmpeg's extract_extradata takes them from a stream);
/// - each packet's NAL units length-prefixed in 4 bytes (``AnnexB/sampleUnits(in:)``), all of
///   them: parameter sets repeated in the stream stay in the samples, as FFmpeg leaves them.
enum AnnexBConversion {
    /// True for a track the conversion is for: H.264 or HEVC whose extradata is empty or
    /// starts with a start code (an avcC / hvcC starts with its version, 1).
    static func applies(to p: CodecParameters) -> Bool {
        (p.codec == "h264" || p.codec == "hevc") && p.sampleEntry.isEmpty
            && (p.extradata.isEmpty || AnnexB.startsWithStartCode(p.extradata))
    }

    /// The configuration record of a `codec` track from its Annex B `extradata` (every SPS,
    /// PPS, SPS extension for H.264; the VPS, SPS, PPS and SEI units for HEVC, other units left
    /// out), `completeness` the hvcC parameter-set arrays' array_completeness (1 for `hvc1`).
    /// - Throws: `.invalidData` naming the track and what is missing or wrong.
    static func record(codec: CodecID, extradata: [UInt8], completeness: Bool, track: Int) throws -> [UInt8] {
        // Split as ff_isom_write_avcc / hvcc split it (zeros after the last unit kept).
        let units = AnnexB.sampleUnits(in: extradata).map { extradata[$0] }
        do {
            if codec == "h264" { return try AVCConfigurationRecord.make(units: units) }
            return try HEVCConfigurationRecord.make(units: units.filter { [32, 33, 34, 39, 40].contains(AnnexB.hevcType($0[$0.startIndex])) },
                                                    completeness: completeness)
        } catch let e as MediaError {
            throw MediaError(e.kind, "track \(track) (\(codec)): its Annex B extradata: \(e.message)")
        }
    }

    /// The parameter sets of a `codec` track's first packet `data` (Annex B), as Annex B bytes:
    /// the SPS and PPS, or VPS, SPS and PPS, each after 00 00 01, as FFmpeg's extract_extradata
    /// takes them from a stream with no extradata (MPEG-TS, raw streams), for a track whose
    /// extradata is empty. As there, a unit followed by a 4-byte start code keeps that start
    /// code's first zero (``AnnexB/rawUnits(in:)``); the record then keeps it on the last
    /// unit (a PPS ending in 00 in FFmpeg's hvcC), so the record is FFmpeg's byte for byte.
    /// - Throws: `.invalidArgument` naming the track when the packet is not in Annex B form or
    ///   holds no parameter sets.
    static func parameterSets(codec: CodecID, firstPacket data: [UInt8], track: Int) throws -> [UInt8] {
        let record = codec == "h264" ? "avcC" : "hvcC"
        guard AnnexB.startsWithStartCode(data) else {
            throw MediaError(.invalidArgument, "track \(track) (\(codec)): no extradata, and its first packet does not start with a start code (00 00 01): there are no parameter sets to build the \(record) from")
        }
        let wanted: Set<Int> = codec == "h264" ? [7, 8] : [32, 33, 34]
        let units = AnnexB.rawUnits(in: data).filter {
            wanted.contains(codec == "h264" ? AnnexB.h264Type(data[$0.lowerBound]) : AnnexB.hevcType(data[$0.lowerBound]))
        }
        guard !units.isEmpty else {
            throw MediaError(.invalidArgument, "track \(track) (\(codec)): no extradata, and its first packet holds no parameter sets (\(codec == "h264" ? "SPS, PPS" : "VPS, SPS, PPS")) to build the \(record) from")
        }
        return units.flatMap { [0, 0, 1] + data[$0] }
    }

    /// The configuration record of a `codec` track from the parameter sets of its first packet
    /// `data` (``parameterSets(codec:firstPacket:track:)``), for a track whose extradata is empty.
    /// - Throws: as ``parameterSets(codec:firstPacket:track:)``; `.invalidData` when they are wrong.
    static func record(codec: CodecID, firstPacket data: [UInt8], completeness: Bool, track: Int) throws -> [UInt8] {
        let sets = try parameterSets(codec: codec, firstPacket: data, track: track)
        let units = AnnexB.sampleUnits(in: sets).map { sets[$0] }
        do {
            if codec == "h264" { return try AVCConfigurationRecord.make(units: units) }
            return try HEVCConfigurationRecord.make(units: units, completeness: completeness)
        } catch let e as MediaError {
            throw MediaError(e.kind, "track \(track) (\(codec)): the parameter sets of its first packet: \(e.message)")
        }
    }

    /// The NAL units of a packet (Annex B) that its sample holds, each after a 4-byte
    /// big-endian length (``sample(_:track:codec:)``), and that sample's size: a muxer writes
    /// the lengths and the units' bytes where they are, without building the sample.
    /// An empty packet has none (its sample is empty). - Throws: `.invalidData` naming the
    /// track when a non-empty packet has no start code (it is not in Annex B form), `.limit`
    /// for a unit of 2^32 bytes or more.
    static func sampleUnits(_ data: [UInt8], track: Int, codec: CodecID) throws -> (units: [Range<Int>], size: Int) {
        guard !data.isEmpty else { return ([], 0) }
        let units = AnnexB.sampleUnits(in: data)
        guard !units.isEmpty else {
            throw MediaError(.invalidData, "track \(track) (\(codec)): a packet of \(data.count) bytes holds no start code (00 00 01); the track's extradata says its packets are in Annex B form")
        }
        var size = 0
        for u in units {
            guard u.count <= Int(UInt32.max) else {
                throw MediaError(.limit, "track \(track) (\(codec)): a NAL unit of \(u.count) bytes does not fit a 4-byte length")
            }
            size += 4 + u.count
        }
        return (units, size)
    }

    /// A packet (Annex B) as a sample: its NAL units each after a 4-byte big-endian length.
    /// An empty packet stays empty. - Throws: as ``sampleUnits(_:track:codec:)``.
    static func sample(_ data: [UInt8], track: Int, codec: CodecID) throws -> [UInt8] {
        let (units, size) = try sampleUnits(data, track: track, codec: codec)
        var out: [UInt8] = []
        out.reserveCapacity(size)
        for u in units {
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: u.count).bigEndian) { out.append(contentsOf: $0) }
            out.append(contentsOf: data[u])
        }
        return out
    }
}
