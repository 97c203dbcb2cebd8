/// Writes an MP3 file from encoded MPEG audio Layer III frames, gapless: the first frame is a
/// silent Info frame (Xing layout: frame count, byte count, table of contents) with a LAME tag
/// whose delay and padding fields let a decoder cut the encoder's priming and the last frame's
/// padding, as FFmpeg's mp3 muxer writes it and its demuxer (and ``AudioStreamDemuxer``) reads
/// it: delay = encoder delay - 529 (the decoder's own delay), padding = decoded samples - delay
/// - input samples (the decoder's 529 samples at the end are cut with it). The Info frame is reserved when the first frame arrives and filled
/// in by ``finish(inputSamples:encoderDelay:)``. The file is written to a temporary name and
/// renamed on success (``OutputFile``).
///
/// As a ``Muxer`` (made by the catalogue for `.mp3`): one MP3 track. An encoded track
/// (``addEncodedTrack(_:timeBase:encoderDelay:)``) states its priming and, with
/// ``setGapless(track:presentedDuration:padding:)``, its length; a demuxed one
/// (``addTrack(from:)``) keeps its own LAME delay and padding; otherwise the tag states none.
public final class MP3Writer: Muxer, @unchecked Sendable {
    private let file: OutputFile
    private var done = false
    private var hasTrack = false
    /// The encoder delay (libmp3lame through libavcodec: its delay + 529) and the input samples, when known.
    private var gaplessDelay = 0
    private var gaplessSamples: Int64?
    private var first: MPEGAudioHeader?
    private var infoSize = 0
    private var frames = 0
    private var bytes = 0
    /// Byte offset (from the first audio frame) of every frame, for the table of contents.
    private var offsets: [Int] = []
    private var musicCRC: UInt16 = 0
    /// The ID3v2 tag written in front of the Info frame (``setMetadata(_:)``).
    private var id3: [UInt8] = []
    /// The ID3v2 version of that tag: 3 or 4.
    private let id3v2Version: Int

    /// Starts `path`, its tags to be written as ID3v2.4.
    /// - Throws: `.io` when the file cannot be created.
    public init(path: String) throws {
        file = try OutputFile(path: path)
        id3v2Version = 4
    }

    /// Starts `path`, its tags to be written as ID3v2 `id3v2Version` (3 or 4; FFmpeg's
    /// `-id3v2_version`); an ID3v2.3 tag is written even without tags, as FFmpeg writes it
    /// (its header and 10 bytes of padding). - Throws: `.invalidArgument` for another version; `.io` when the
    /// file cannot be created.
    public init(path: String, id3v2Version: Int) throws {
        guard id3v2Version == 3 || id3v2Version == 4 else {
            throw MediaError(.invalidArgument, "ID3v2 version \(id3v2Version) is not written: give 3 (ID3v2.3) or 4 (ID3v2.4)", path: path)
        }
        file = try OutputFile(path: path)
        self.id3v2Version = id3v2Version
        // ffmpeg -id3v2_version 3 writes its tag without tags too: a header and its padding.
        if id3v2Version == 3 { id3 = MetadataWriting.id3v2_3(tags: [], pictures: [], chapters: [], padding: 10) }
    }

    deinit { if !done { file.discard() } }

    /// Adds the file's one track.
    /// - Throws: `.unsupported` for a second track or a codec other than MP3.
    public func addTrack(_ parameters: CodecParameters, timeBase: Rational) throws -> Int {
        guard !hasTrack, !done else { throw MediaError(.unsupported, "an MP3 file holds one track", path: file.path) }
        guard parameters.codec == "mp3" else {
            throw MediaError(.unsupported, "MP3 files cannot carry \(parameters.codec.isUnknown ? "an unknown codec" : parameters.codec.rawValue): they hold one MPEG audio Layer III stream",
                             path: file.path)
        }
        hasTrack = true
        return 0
    }

    /// Adds a demuxed track, keeping its encoder delay and padding (an MP3's LAME tag) when
    /// its time base counts samples. - Throws: as ``addTrack(_:timeBase:)``.
    public func addTrack(from track: Track) throws -> Int {
        let index = try addTrack(track.parameters, timeBase: track.timeBase)
        if track.timeBase == Rational(1, Int64(track.parameters.sampleRate)), track.encoderDelay > 0 || track.encoderPadding > 0, track.duration > 0 {
            gaplessDelay = track.encoderDelay
            gaplessSamples = max(0, track.duration - Int64(track.encoderDelay) - Int64(track.encoderPadding))
        }
        return index
    }

    /// Adds an encoded track whose first `encoderDelay` samples are priming (LAME's delay + 529
    /// through libavcodec). - Throws: as ``addTrack(_:timeBase:)``.
    public func addEncodedTrack(_ parameters: CodecParameters, timeBase: Rational, encoderDelay: Int) throws -> Int {
        let index = try addTrack(parameters, timeBase: timeBase)
        gaplessDelay = encoderDelay
        return index
    }

    /// States the input samples (`presentedDuration`) for the LAME tag ``finish()`` writes.
    public func setGapless(track: Int, presentedDuration: Int64, padding: Int64) throws {
        gaplessSamples = presentedDuration
    }

    /// Fills in the Info frame with the gapless facts given (none: the decoded length, no
    /// delay) and renames the file into place. - Throws: as ``finish(inputSamples:encoderDelay:)``.
    public func finish() throws {
        let decoded = Int64(frames) * Int64(first?.samplesPerFrame ?? 0)
        try finish(inputSamples: gaplessSamples ?? max(0, decoded - Int64(max(0, gaplessDelay - 529))), encoderDelay: gaplessDelay)
    }

    /// Keeps the tags, pictures and chapters to write as an ID3v2 tag in front of the Info
    /// frame (text frames, TXXX, COMM, USLT, PRIV, APIC, CHAP and CTOC), as FFmpeg's mp3 muxer
    /// writes its ID3v2 tag: the container's tags, then the track's that it does not have.
    /// ID3v2.4 by default (``MetadataWriting/id3v2(tags:pictures:chapters:padding:)``), ID3v2.3
    /// when the writer was made for it (``MetadataWriting/id3v2_3(tags:pictures:chapters:padding:)``,
    /// with FFmpeg's 10 bytes of padding). - Throws: `.state` after the first packet;
    /// `.invalidArgument` for a tag over ID3v2's 256 MiB.
    public func setMetadata(_ metadata: MuxMetadata) throws {
        guard first == nil, !done else {
            if metadata.isEmpty { return }
            throw MediaError(.state, "metadata must be given before the first packet", path: file.path)
        }
        let tag = MetadataWriting.id3v2(version: id3v2Version, tags: metadata.combined(track: 0), pictures: metadata.pictures,
                                        chapters: metadata.chapters, padding: id3v2Version == 3 ? 10 : 0)
        guard tag.count < 1 << 28 else {
            throw MediaError(.invalidArgument, "an ID3v2 tag of \(tag.count) bytes is over the format's 256 MiB", path: file.path)
        }
        id3 = tag
    }

    /// Writes one encoded Layer III frame. A packet of fewer than 4 bytes after the first frame
    /// (no header fits: FFmpeg's MP3 parser makes one of a file's trailing bytes) is written as
    /// it is and not counted in the Info frame, as FFmpeg's mp3 muxer writes it.
    /// - Throws: `.invalidData` for a packet that is not an MPEG audio Layer III frame continuing the first.
    public func write(_ packet: Packet) throws {
        if packet.data.count < 4, first != nil {
            try file.write(packet.data)
            return
        }
        guard let h = MPEGAudioHeader(packet.data), h.layer == 3, first.map({ $0.continues(h) }) ?? true else {
            throw MediaError(.invalidData, "packet \(frames) is not an MPEG audio Layer III frame of the stream", path: file.path)
        }
        // A frame cut short or run on would make the file unreadable from there (readers find
        // the next frame where the header says it is).
        guard h.frameSize == 0 || h.frameSize == packet.data.count else {
            throw MediaError(.invalidData, "packet \(frames) is \(packet.data.count) bytes; its header states a frame of \(h.frameSize) bytes", path: file.path)
        }
        if first == nil {
            first = h
            infoSize = Self.infoFrameSize(h)
            try file.write(id3 + [UInt8](repeating: 0, count: infoSize))
        }
        offsets.append(bytes)
        frames += 1
        bytes += packet.data.count
        musicCRC = Self.crc16(packet.data, musicCRC)
        try file.write(packet.data)
    }

    /// Fills in the Info frame and renames the file into place.
    /// - Parameters:
    ///   - inputSamples: samples per channel the encoder was given.
    ///   - encoderDelay: the encoder's priming (libmp3lame through libavcodec: its delay + 529).
    /// - Throws: `.invalidArgument` for a negative count or delay (or beyond 2^60) or when no
    ///   frame was written (the file would be empty); `.io`. The file is then removed.
    public func finish(inputSamples: Int64, encoderDelay: Int) throws {
        done = true
        do {
            guard inputSamples >= 0, inputSamples <= MuxLimits.ticks, encoderDelay >= 0, Int64(encoderDelay) <= MuxLimits.ticks else {
                throw MediaError(.invalidArgument, "an MP3 file cannot state \(inputSamples) input samples with an encoder delay of \(encoderDelay)", path: file.path)
            }
            guard let h = first else {
                throw MediaError(.invalidArgument, "no frame was written: an MP3 file without frames cannot be read", path: file.path)
            }
            let decoded = Int64(frames) * Int64(h.samplesPerFrame)
            let delay = max(0, encoderDelay - 529)
            let padding = max(0, decoded - Int64(delay) - inputSamples)
            try file.patch(infoFrame(h, delay: delay, padding: Int(min(padding, 4095))), at: Int64(id3.count))
            try file.commit()
        } catch {
            file.discard()
            throw error
        }
    }

    /// Abandons the file and removes what was written.
    public func cancel() {
        done = true
        file.discard()
    }

    /// Bytes the Info frame needs after the side information: "Info", flags, frames, bytes,
    /// 100-byte table, quality, then LAME's 36-byte tag.
    private static let tagBytes = 4 + 4 + 4 + 4 + 100 + 4 + 36

    /// The smallest frame size (bit rate index) of `h`'s version and rate that holds the tag.
    static func infoFrameSize(_ h: MPEGAudioHeader) -> Int {
        let needed = h.sideInfoEnd - (h.hasCRC ? 2 : 0) + tagBytes
        for index in 1...14 {
            if let t = header(h, bitRateIndex: index), t.frameSize >= needed { return t.frameSize }
        }
        return header(h, bitRateIndex: 14)?.frameSize ?? needed
    }

    /// `h`'s header with another bit rate index, no CRC and no padding.
    private static func header(_ h: MPEGAudioHeader, bitRateIndex: Int) -> MPEGAudioHeader? {
        let b1 = UInt8(truncatingIfNeeded: (h.raw >> 16) & 0xFF) | 1
        let b2 = UInt8(truncatingIfNeeded: bitRateIndex << 4) | (UInt8(truncatingIfNeeded: (h.raw >> 8) & 0xFF) & 0x0C)
        return MPEGAudioHeader(0xFF, b1, b2, UInt8(truncatingIfNeeded: h.raw & 0xFF))
    }

    private func infoFrame(_ h: MPEGAudioHeader, delay: Int, padding: Int) -> [UInt8] {
        var index = 1
        while let t = Self.header(h, bitRateIndex: index), t.frameSize != infoSize, index < 14 { index += 1 }
        let t = Self.header(h, bitRateIndex: index)!
        var f = [UInt8](repeating: 0, count: infoSize)
        f[0] = 0xFF; f[1] = UInt8(truncatingIfNeeded: (t.raw >> 16) & 0xFF); f[2] = UInt8(truncatingIfNeeded: (t.raw >> 8) & 0xFF); f[3] = UInt8(truncatingIfNeeded: t.raw & 0xFF)
        var at = t.sideInfoEnd
        func put32(_ v: Int) {
            for k in 0..<4 { f[at + k] = UInt8(truncatingIfNeeded: (v >> (24 - 8 * k)) & 0xFF) }
            at += 4
        }
        for c in "Info".utf8 { f[at] = c; at += 1 }
        put32(0x0F)                                    // frames, bytes, table of contents, quality
        put32(frames)
        put32(bytes + infoSize)                        // LAME counts the Info frame in
        let duration = frames
        for i in 0..<100 {
            let frame = min(frames - 1, i * duration / 100)
            let position = frames > 0 ? infoSize + offsets[max(0, frame)] : 0
            f[at + i] = UInt8(min(255, position * 256 / max(1, bytes + infoSize)))
        }
        at += 100
        put32(100)                                     // quality (LAME's -V scale * 10 + 100 - q)
        for c in "LAME3.100".utf8 { f[at] = c; at += 1 }
        at += 12                                       // revision / VBR method, lowpass, peak, gains, flags, ABR rate
        let pair = delay << 12 | padding
        f[at] = UInt8(truncatingIfNeeded: (pair >> 16) & 0xFF); f[at + 1] = UInt8(truncatingIfNeeded: (pair >> 8) & 0xFF); f[at + 2] = UInt8(truncatingIfNeeded: pair & 0xFF)
        at += 3
        at += 4                                        // misc, MP3 gain, preset / surround
        put32(bytes + infoSize)                        // music length
        f[at] = UInt8(truncatingIfNeeded: musicCRC >> 8); f[at + 1] = UInt8(truncatingIfNeeded: musicCRC & 0xFF)
        at += 2
        let tagCRC = Self.crc16(Array(f[0..<at]), 0)
        f[at] = UInt8(truncatingIfNeeded: tagCRC >> 8); f[at + 1] = UInt8(truncatingIfNeeded: tagCRC & 0xFF)
        return f
    }

    /// CRC-16 with the polynomial 0x8005, reflected (LAME's tag and music CRCs).
    static func crc16(_ data: [UInt8], _ start: UInt16) -> UInt16 {
        var crc = start
        for b in data {
            crc ^= UInt16(b)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        }
        return crc
    }
}

extension MuxerFormat {
    /// MP3 (``MP3Writer``): one MPEG audio Layer III track, an Info frame with LAME's tag first;
    /// the tags as ID3v2.4, or ID3v2.3 with ``MuxerOptions/id3v2Version`` 3.
    public static let mp3 = MuxerFormat(name: "mp3", description: "MP3", extensions: ["mp3"], mimeTypes: ["audio/mpeg"],
                                        codecs: ["mp3"], options: [.id3v2Version], defaultAudioCodec: "mp3",
                                        make: { path, o in try MP3Writer(path: path, id3v2Version: o.checkedID3v2Version(path: path)) })
}
