/// A push parser for audio that arrives in pieces (a download, a socket, a live radio stream),
/// as iOS's AudioFileStream: MPEG audio (Layer I, II, III; MPEG-1, 2, 2.5), ADTS AAC, AC-3 and
/// E-AC-3, DTS and the AMR-NB / AMR-WB storage format (`#!AMR`), with ID3v2 tags before (or
/// between) the frames and ID3v1 / APEv2 / Lyrics3 tags after them; and every audio container
/// that can be read front to back: WAV / RF64, AIFF / AIFF-C, CAF, FLAC, Ogg (Opus, Vorbis,
/// FLAC ...), MP4 / M4A with its `moov` before the media data, and MPEG-TS.
///
/// A container is read by its own demuxer (the one ``ContainerCatalog`` opens files with),
/// run over the bytes pushed so far: its packets are the pull demuxer's, reported as soon as
/// their bytes have arrived (and the demuxer has read what it reads to know a packet is whole:
/// the next Ogg page, the next FLAC frame's header). Of a file with several tracks the first
/// audio track is read. A chained Ogg file (links of one codec, read as one track as FFmpeg
/// reads them) gives a new ``Event/dataFormat(_:)`` and ``Event/magicCookie(_:)`` before the
/// first packet of a link whose configuration differs; a link of another codec ends it with the
/// demuxer's `.unsupported` error, as FFmpeg ends there. The magic cookie is the codec's configuration (FLAC STREAMINFO, the AAC
/// AudioSpecificConfig, the Opus / Vorbis headers, ALAC's config). An MP4 whose `moov` follows
/// its media data cannot be read front to back and is refused with an error that says so (as
/// Apple's AudioFileStream refuses it); so is a seek (`discontinuity`) in a container.
/// A stream that can be none of the types read is refused as soon as that is clear: at the
/// signature of a container not read here (Matroska, AVI ...), or after
/// ``maxBytesBeforeSync`` bytes without a frame.
///
/// Hand it bytes in any chunking, down to one byte at a time, with ``push(_:discontinuity:)``;
/// it returns the events that became known, in order (packets in lists of at most
/// ``packetsPerEvent``). Bytes that do not complete a frame
/// are kept until the next push: a caller never sends them again. ``finish()`` ends the input.
///
/// A frame is reported only once the header after it confirms it (same version, layer, rate
/// and channels), so a false sync inside a tag, cover art or garbage is rejected; damage in the
/// middle is skipped with a ``Event/warning(_:)`` naming the byte offset, and parsing goes on.
/// AMR frames have no sync word: after the magic number every frame is taken as its
/// table-of-contents byte says, as FFmpeg reads them. Packets are what FFmpeg's parsers make:
/// E-AC-3 dependent frames join the frame before them, DTS-HD extension substreams their core
/// frame.
///
/// ```swift
/// let parser = AudioStreamParser()
/// for chunk in chunks {
///     for event in try parser.push(chunk) {
///         if case .packets(let packets) = event { decode(packets) }
///     }
/// }
/// for event in parser.finish() { ... }
/// ```
public final class AudioStreamParser {
    /// What the stream holds.
    public struct DataFormat: Sendable, Hashable {
        /// FFmpeg's codec name: "mp1", "mp2", "mp3", "aac", "ac3", "eac3", "dts", "amr_nb" or
        /// "amr_wb"; in a container, its track's codec ("pcm_s16le", "flac", "opus", "alac" ...).
        public var codec: CodecID
        /// Samples per second.
        public var sampleRate: Int
        /// Channels (0 when an AAC program config element states them).
        public var channels: Int
        /// Samples per channel in one packet; 0 in a container where they vary from packet to
        /// packet (PCM, Opus, Vorbis, FLAC with several block sizes: see ``Packet/frames``).
        public var framesPerPacket: Int
        /// The codec's profile where one format has layers ("LC", "HE-AAC", "HE-AACv2" for AAC;
        /// see ``AudioStreamParser/formatList``); nil otherwise.
        public var profile: String? = nil
    }

    /// Priming and remainder frames (Apple's `AudioFilePacketTableInfo`): the samples a decoder
    /// outputs before the first and after the last real sample.
    public struct PacketTableInfo: Sendable, Hashable {
        /// Samples per channel to drop at the start: the encoder's delay plus the decoder's (529
        /// for MPEG audio, as FFmpeg's mp3 demuxer skips them).
        public var primingFrames: Int64
        /// Samples per channel to drop at the end.
        public var remainderFrames: Int64
        /// Samples per channel that remain (the packets' samples less both), when the packet
        /// count is known (Xing / VBRI, or after ``AudioStreamParser/finish()``); else nil.
        public var validFrames: Int64?
    }

    /// Where a packet is in the stream and what it holds.
    public struct Packet: Sendable, Hashable {
        /// Byte offset of the frame in the stream (from the first byte pushed); in a container,
        /// of the packet's first byte as its demuxer gives it (-1 where it gives none).
        public var offset: Int64
        /// The frame's bytes (its header included).
        public var data: [UInt8]
        /// Samples per channel it decodes to.
        public var frames: Int
        /// True for the bytes left at the end of a stream cut inside a frame (handed on as
        /// FFmpeg's parser hands them on: a decoder may get part of the frame out of them).
        public var isTruncated = false
    }

    /// Something the parser learned.
    public enum Event: Sendable {
        /// "mp3" (MPEG audio, any layer), "adts", "ac3" (AC-3 or E-AC-3), "dts" or "amr"; for a
        /// container its ``ContainerFormat`` name: "wav", "aiff", "caf", "flac", "ogg", "mp4" or "mpegts".
        case fileFormat(String)
        /// Codec, rate, channels, frames per packet.
        case dataFormat(DataFormat)
        /// The configuration a decoder takes (ADTS: the AudioSpecificConfig its header implies).
        case magicCookie([UInt8])
        /// Offset of the first audio frame.
        case dataOffset(Int64)
        /// Bytes of audio data, as a Xing / VBRI header states it.
        case audioDataByteCount(Int64)
        /// Audio packets, as a Xing / VBRI header or a container's header (WAV, AIFF, CAF, MP4) states it.
        case audioDataPacketCount(Int64)
        /// Bits per second: exact for a constant bit rate, else the average of the packets so far.
        case bitRate(Int, exact: Bool)
        /// Duration in seconds: exact from a Xing / VBRI frame count, otherwise estimated from the
        /// stream's length (when known, see ``init(totalBytes:)``) and bit rate.
        case duration(Double, estimated: Bool)
        /// LAME's encoder delay and padding, in samples.
        case encoderDelayAndPadding(delay: Int, padding: Int)
        /// Tags read (ID3v2 before the audio, ID3v1 after it).
        case tags(AudioTags)
        /// The format is known: packets follow.
        case readyToProducePackets
        /// Parsing resumed at `offset` after bytes pushed with `discontinuity` (a seek to an
        /// estimated offset): `skipped` bytes before the first confirmed frame there were passed
        /// over. Not damage: the offset was a guess.
        case discontinuity(offset: Int64, skipped: Int64)
        /// Complete frames, in order.
        case packets([Packet])
        /// Damage skipped, or a tag part not read; parsing goes on.
        case warning(MediaError)
    }

    /// The format, once known.
    public private(set) var dataFormat: DataFormat?
    /// Tags read so far.
    public private(set) var tags = AudioTags()
    /// Every tag read so far with its normalised, native and FFmpeg key, as the MP3 / ADTS demuxer
    /// reads them (``Demuxer/metadata``): the ID3v2 tags' frames; an ID3v1 tag at the end when no
    /// ID3v2 tag gave one (ADTS: the ID3v1 tag replaces the ID3v2 text tags, as FFmpeg's aac
    /// demuxer does). APEv2 and Lyrics3 tags are skipped, not read.
    public private(set) var metadata = Metadata(ffmpegMerge: .keepFirst)
    /// The pictures of the ID3v2 tags (APIC / PIC), in tag order.
    public private(set) var attachments: [Attachment] = []
    /// The chapters of the ID3v2 tags (CHAP), in time order.
    public private(set) var chapters: [Chapter] = []
    /// The container ("mp3", "adts", "ac3", "dts", "amr", "wav", "aiff", "caf", "flac", "ogg",
    /// "mp4" or "mpegts"), once known.
    public private(set) var fileFormat: String?
    /// The largest packet reported so far, in bytes (0 before the first).
    public private(set) var maximumPacketSize = 0
    /// The registry whose AAC decoder ``formatList`` decodes the first ADTS frame with.
    public var registry: MediaRegistry = .shared
    /// The VBR header of the first frame, if there was one.
    public private(set) var vbrHeader: MPEGAudioVBRHeader?
    /// Offset of the frame that carried ``vbrHeader``.
    public private(set) var vbrHeaderOffset: Int64?
    /// Offset of the first byte after the tags that start the stream (where its audio should
    /// begin; junk may come before the first frame).
    public private(set) var tagsEnd: Int64?
    /// Offset of the first audio frame, once known.
    public private(set) var dataOffset: Int64?
    /// Packets reported so far.
    public private(set) var packetCount: Int64 = 0
    /// Audio bytes reported so far.
    public private(set) var audioBytes: Int64 = 0
    /// Samples per channel reported so far.
    public private(set) var sampleCount: Int64 = 0
    /// The configuration a decoder takes, once known (ADTS: the AudioSpecificConfig; empty for MPEG audio).
    public private(set) var magicCookie: [UInt8]?
    /// The duration reported with ``Event/duration(_:estimated:)``, once known: exact from a
    /// Xing / VBRI frame count or after ``finish()``; an ID3 `TLEN`'s (stated, not estimated)
    /// when there is one; else estimated from the stream's length and the average bit rate of
    /// the packets so far, refined as they arrive.
    public private(set) var duration: (seconds: Double, estimated: Bool)?
    /// The bit rate reported with ``Event/bitRate(_:exact:)``, once known: the average of the
    /// packets so far, refined as they arrive (exact while every packet had the same rate).
    public private(set) var bitRate: (bitsPerSecond: Int, exact: Bool)?

    private let totalBytes: Int64?
    private var buffer: [UInt8] = []
    private var bufferStart: Int64 = 0
    private var cursor = 0
    private var isADTS: Bool?
    /// AC-3 / E-AC-3, DTS or AMR, once the first frame (AMR: the magic number) was seen; then
    /// ``isADTS`` stays nil.
    private var rawFamily: RawAudioFrame.Family?
    private var lastRaw: RawAudioFrame?
    private var lastMPEG: MPEGAudioHeader?
    private var lastADTS: ADTSHeader?
    private var synced = false
    private var firstFrameChecked = false
    private var damageStart: Int64?
    private var damageReason = ""
    private var skipRemaining: Int64 = 0
    /// The first packet's bit rate, and whether another packet had a different one.
    private var firstBitRate: Int?
    private var bitRateVaries = false
    /// True while every packet so far had the same bit rate.
    private var constantBitRate: Bool { firstBitRate != nil && !bitRateVaries }
    private var nextOffsetAfterSeek: Int64?
    private var ended = false
    /// Offsets of the packets parsed without a break from the first one (packet i at [i]):
    /// a seek to one of them is exact. Kept up to ``maxIndexedPackets``.
    private var packetOffsets: [Int64] = []
    /// False after a discontinuity: packets are no longer counted from the first one.
    private var indexing = true
    /// Constant bit rate MPEG audio: the range of phases of the padding accumulator that the
    /// padding bits seen so far allow (see ``CBRPattern``); nil once the stream is not CBR.
    private var cbr: CBRPattern?
    private var cbrKnown = false
    /// ADTS: the first frame, which ``formatList`` decodes to find SBR / PS.
    private var firstADTSFrame: [UInt8]?
    private var cachedFormatList: [DataFormat]?
    /// The duration an ID3 `TLEN` frame states, in seconds.
    private var statedLength: Double?
    /// Set by a push with `discontinuity`: the next confirmed frame reports ``Event/discontinuity(offset:skipped:)``.
    private var resumeAfterSeek: Int64?
    /// The trailing tags (ID3v1, APEv2, Lyrics3) seen after the first frame, in bytes.
    private var trailingTagBytes: Int64 = 0
    /// The size of the last packet in ``packetOffsets``.
    private var lastIndexedSize = 0
    /// The bytes of the packet cut short at the end of the stream, if there was one (not in
    /// ``packetCount`` / ``audioBytes``, which count whole frames).
    private var truncatedTail: Int?
    /// A container's demuxer, once the bytes turned out to be one (see ``ContainerPushReader``).
    private var container: ContainerPushReader?
    /// The offset of the container's first byte in the stream (after an ID3v2 tag in front).
    private var containerBase: Int64 = 0
    /// The container's audio track, once its header was read.
    private var containerTrack: Track?
    /// The packets a container's header lists (WAV, AIFF, CAF, MP4), exact.
    private var statedPacketCount: Int64?
    /// The container's demuxer failed after packets that were reported: thrown by the next push.
    private var containerError: MediaError?

    private static let tagMarkers = ["ID3", "TAG", "APETAGEX", "LYRICSBEGIN"].map { Array($0.utf8) }
    private static let apeMarker = Array("APETAGEX".utf8)
    private static let lyricsMarker = Array("LYRICSBEGIN".utf8)
    private static let lyricsEnds = [Array("LYRICS200".utf8), Array("LYRICSEND".utf8)]
    /// Where the scan for a Lyrics3 tag's end stopped (absolute offset), while the tag's end
    /// has not arrived yet.
    private var lyricsScannedTo: Int64?

    /// The index just past the first "LYRICS200" or "LYRICSEND" at or after `start` (one
    /// linear pass, checking for both ends at each "LYRICS").
    private static func lyricsEnd(in bytes: [UInt8], from start: Int) -> Int? {
        bytes.withUnsafeBufferPointer { b -> Int? in
            let count = b.count
            var i = start
            while i + 9 <= count {
                if b[i] == 0x4C /* L */, b[i + 1] == 0x59, b[i + 2] == 0x52, b[i + 3] == 0x49, b[i + 4] == 0x43, b[i + 5] == 0x53 {
                    for end in lyricsEnds where b[i + 6] == end[6] && b[i + 7] == end[7] && b[i + 8] == end[8] { return i + 9 }
                }
                i += 1
            }
            return nil
        }
    }
    private static let adifMarker = Array("ADIF".utf8)

    /// Tags larger than this are skipped without being read (they are still never taken for audio).
    public static let maxTagBytes = 16 << 20
    /// Largest frame looked for: ADTS's 13-bit length; free-format MPEG audio up to this too.
    static let maxFrameBytes = 8192

    /// Packets in one ``Event/packets(_:)`` at most (a long push gives several): the list's
    /// size stays bounded whatever the chunking, even for frames smaller than its entries.
    public static let packetsPerEvent = 64

    /// Packet offsets kept for exact seeks (8 bytes each: about 7 hours of MP3).
    public static let maxIndexedPackets = 1 << 20

    /// A parser. `totalBytes` is the stream's length when known (a file), for duration
    /// estimates. `fileTypeHint` is what the caller believes the stream is (Apple's
    /// `inFileTypeHint`): a format's name or a file name extension ("wav", "m4a", "aac",
    /// "ts" ...; see ``fileTypeHint``). The bytes decide: a wrong hint is overridden by them.
    public init(totalBytes: Int64? = nil, fileTypeHint: String? = nil) {
        self.totalBytes = totalBytes
        self.fileTypeHint = fileTypeHint.flatMap(Self.formatName(hint:))
    }

    /// The format the hint given to ``init(totalBytes:fileTypeHint:)`` names, as its format name
    /// ("mp3", "adts", "ac3", "eac3", "dts", "amr", "wav", "aiff", "caf", "flac", "ogg", "mp4"
    /// or "mpegts"); nil without a hint or for one that names no format this parser reads
    /// (ignored, as Apple ignores a hint it does not know). Every format read here has a
    /// signature or a sync word its bytes are recognised by, so the bytes always decide (a
    /// wrong hint is overridden, as Apple's is); the hint names the expected type in the error
    /// for bytes that are none of them.
    public let fileTypeHint: String?

    /// Bytes after the leading tags without a frame or a container signature, after which a
    /// stream is refused as none of the types this parser reads (`.unsupported`), not at
    /// ``finish()``: 64 KiB, more than any of them has before its first frame.
    public static let maxBytesBeforeSync: Int64 = 64 << 10

    /// The format name of a hint: a name or an extension of a format this parser reads.
    static func formatName(hint: String) -> String? {
        var h = hint.lowercased().trimmingCharacters(in: .whitespaces)
        if h.hasPrefix(".") { h.removeFirst() }
        if let dot = h.lastIndex(of: ".") { h = String(h[h.index(after: dot)...]) }   // a file name
        let table: [String: String] = [
            "mp3": "mp3", "mp2": "mp3", "mp1": "mp3", "mpa": "mp3", "mpga": "mp3", "adts": "adts", "aac": "adts",
            "ac3": "ac3", "eac3": "eac3", "ec3": "eac3", "dts": "dts", "amr": "amr", "awb": "amr",
            "wav": "wav", "wave": "wav", "rf64": "wav", "aif": "aiff", "aiff": "aiff", "aifc": "aiff", "caf": "caf",
            "flac": "flac", "ogg": "ogg", "oga": "ogg", "opus": "ogg", "mp4": "mp4", "m4a": "mp4", "m4b": "mp4",
            "mov": "mp4", "3gp": "mp4", "mpegts": "mpegts", "ts": "mpegts", "m2ts": "mpegts",
        ]
        return table[h]
    }

    /// Parses `bytes`, the next piece of the stream. With `discontinuity` (after a seek, or a gap)
    /// everything kept is dropped and a frame must be confirmed again before packets are reported;
    /// the bytes are taken to start at the offset ``seek(to:)`` returned, else right after the
    /// bytes pushed before.
    /// - Throws: `.unsupported` for ADIF AAC (no frame headers to parse), for a container this
    ///   parser does not read (Matroska / WebM, AVI, IVF ...) as soon as its signature has
    ///   arrived (after any ID3v2 tag in front), for ``maxBytesBeforeSync`` bytes without a
    ///   frame, for an MP4 whose `moov` comes after its media data and for a discontinuity in a
    ///   container; a container demuxer's error (damage it cannot step over), thrown by the
    ///   push that brought its bytes, or by the next one when that push reported packets.
    public func push(_ bytes: [UInt8], discontinuity: Bool = false) throws -> [Event] {
        if let reader = container {
            if let e = containerError { throw e }
            if discontinuity {
                throw MediaError(.unsupported, "a discontinuity in a \(reader.format.description) stream: its demuxer reads it front to back, without seeking",
                                 offset: bufferStart, context: "audio stream")
            }
            return try containerEvents(reader.push(bytes))
        }
        if discontinuity {
            bufferStart = nextOffsetAfterSeek ?? (bufferStart + Int64(buffer.count))
            buffer.removeAll(keepingCapacity: true)
            cursor = 0
            synced = false
            skipRemaining = 0
            nextOffsetAfterSeek = nil
            indexing = false
            lyricsScannedTo = nil
            damageStart = nil
            resumeAfterSeek = bufferStart
        }
        if skipRemaining > 0 {
            let n = Int(min(skipRemaining, Int64(bytes.count)))
            skipRemaining -= Int64(n)
            bufferStart += Int64(n)
            buffer.append(contentsOf: bytes[n...])
        } else if buffer.isEmpty {
            buffer = bytes   // nothing kept: parse the caller's bytes where they are (no copy)
        } else {
            // Exactly what is kept plus the new bytes (no doubling): the buffer never holds more
            // than the bytes pushed and not yet parsed.
            buffer.reserveCapacity(buffer.count + bytes.count)
            buffer.append(contentsOf: bytes)
        }
        return try parse(final: false)
    }

    /// Ends the input: the last frame is reported without a header after it, and the bit rate.
    public func finish() -> [Event] {
        if container != nil && ended { return [] }
        var events = (try? parse(final: true)) ?? []
        if let reader = container {
            ended = true
            if let e = containerError {
                containerError = nil
                return [.warning(e)]
            }
            do {
                events += try containerEvents(reader.finish())
            } catch let e as MediaError {
                containerError = nil
                events.append(.warning(e))
            } catch {}
            finishContainerEstimates(into: &events)
            return events
        }
        if packetCount == 0 && !ended {
            let end = bufferStart + Int64(buffer.count)
            let what = dataFormat == nil ? "an MPEG audio or ADTS frame confirmed by the next one" : "an audio frame after the VBR header"
            events.append(.warning(MediaError(.invalidData, "the stream ends after \(end) bytes without \(what)", offset: end, context: "audio stream")))
        }
        if packetCount > 0, let f = dataFormat, f.sampleRate > 0 {
            let seconds = Double(sampleCount) / Double(f.sampleRate)
            let rate = (constantBitRate ? firstBitRate! : Int(Double(audioBytes * 8) / max(seconds, 1e-9)), constantBitRate)
            bitRate = rate
            events.append(.bitRate(rate.0, exact: rate.1))
            // Every packet was parsed (from the first one): their samples are the duration.
            if indexing && !(duration?.estimated == false && vbrHeader?.frames != nil) && (duration.map { $0.seconds != seconds || $0.estimated } ?? true) {
                duration = (seconds, false)
                events.append(.duration(seconds, estimated: false))
            }
        }
        ended = true
        return events
    }

    /// Where to go for `seconds`: the byte offset to push from (with `discontinuity: true`), the
    /// index of the packet that holds that time (counting the stream's packets from 0, samples
    /// from the first packet's), and whether the offset is that packet's exact start.
    ///
    /// Exact means one of:
    /// - the packet was already parsed (without a discontinuity since the first one): its offset;
    /// - constant bit rate MPEG audio: every frame has the same bit rate, so frame `n` starts at
    ///   `dataOffset + n * size + (padding slots in frames 0..<n)`. ISO/IEC 11172-3 (2.4.3.1)
    ///   pads frames so that the mean rate is exact, which encoders (LAME, FFmpeg's) do with a
    ///   running accumulator: the slots in the first `n` frames are `(n * r + phase) / rate`
    ///   where `r` is the fractional part of a frame's size. The padding bits of the frames
    ///   parsed so far pin `phase` down; when every phase they allow gives the same count for
    ///   `n`, the offset is exact (it is that frame's start if the stream goes on as it
    ///   began: the same bit rate and padding rule). Otherwise it is flagged estimated, as is a
    ///   stream whose padding does not follow the rule.
    ///
    /// AMR, past the packets parsed so far: the last of them (exact, but an earlier packet than
    /// the one holding `seconds`): its frames have no sync word to resynchronise on.
    ///
    /// Estimated: from the Xing / VBRI table of contents, else from the average bit rate so
    /// far; the parser then resynchronises at the first confirmed frame after the offset. An
    /// offset at or past the end of a stream of known length is never exact.
    /// Returns nil before the format and the first audio frame are known.
    public func seek(to seconds: Double) -> (offset: Int64, packet: Int64, exact: Bool)? {
        guard let f = dataFormat, let start = dataOffset, f.sampleRate > 0, f.framesPerPacket > 0 else { return nil }
        var packet = Int64(max(0, seconds) * Double(f.sampleRate) / Double(f.framesPerPacket))
        if let total = vbrHeader?.frames, total > 0 { packet = min(packet, Int64(total) - 1) }
        var result: (Int64, Int64, Bool)
        if packet < Int64(packetOffsets.count) {
            result = (packetOffsets[Int(packet)], packet, true)
        } else if rawFamily == .amrNB || rawFamily == .amrWB, let last = packetOffsets.last {
            // AMR has no sync word to find a frame again after a guessed offset: the last packet
            // parsed (exact), from which reading on reaches the time.
            result = (last, Int64(packetOffsets.count - 1), true)
        } else if constantBitRate, let pattern = cbr, let range = pattern.slots(before: packet) {
            result = (start + packet * pattern.slotsPerFrame * pattern.slotBytes + range.lowerBound * pattern.slotBytes, packet,
                      range.lowerBound == range.upperBound)
        } else if let vbr = vbrHeader, let toc = vbr.tableOfContents, let frames = vbr.frames, frames > 0,
                  let bytes = vbr.bytes ?? totalBytes.map({ Int($0 - (vbrHeaderOffset ?? start)) }) {
            // Xing: the table and the byte count start at the Xing frame (LAME counts it in).
            let base = vbrHeaderOffset ?? start
            let total = Double(frames) * Double(f.framesPerPacket) / Double(f.sampleRate)
            let percent = min(99.999, max(0, seconds / total * 100))
            let i = Int(percent)
            let a = Double(toc[i]), b = i < 99 ? Double(toc[i + 1]) : 256
            let fraction = (a + (b - a) * (percent - Double(i))) / 256
            result = (max(start, base + Int64(fraction * Double(bytes))), packet, false)
        } else {
            let parsed = Double(sampleCount) / Double(f.sampleRate)
            guard parsed > 0 else { return nil }
            let bytesPerSecond = Double(audioBytes) / parsed
            result = (start + Int64(Double(packet) * Double(f.framesPerPacket) / Double(f.sampleRate) * bytesPerSecond), packet, false)
        }
        // Past the end of a stream of known length: no such packet (the time is past the end).
        if let t = totalBytes, result.0 >= t { result.2 = false }
        nextOffsetAfterSeek = result.0
        return result
    }

    /// The padding of a constant bit rate MPEG audio stream. A frame's size is
    /// `(slotsPerFrame + padding) * slotBytes`, where `slotsPerFrame` is the whole part of
    /// `factor * bitRate / sampleRate` and `remainder` its fractional part times the rate; an
    /// encoder that pads by a running accumulator pads `(n * remainder + phase) / sampleRate`
    /// of the first `n` frames, for one `phase` in `0..<sampleRate`.
    struct CBRPattern {
        let bitRate: Int
        let slotsPerFrame: Int64
        let slotBytes: Int64
        let remainder: Int64
        let rate: Int64
        /// The phases the padding seen so far allows: `phases.lowerBound...phases.upperBound`.
        var phases: ClosedRange<Int64>
        /// Frames seen and padding slots among them.
        var frames: Int64 = 0
        var padded: Int64 = 0

        init?(_ h: MPEGAudioHeader) {
            guard h.bitRate > 0, h.sampleRate > 0 else { return nil }
            let factor = h.layer == 1 ? 12 : (h.layer == 3 && h.version != 1 ? 72 : 144)
            bitRate = h.bitRate
            slotsPerFrame = Int64(factor * h.bitRate / h.sampleRate)
            slotBytes = h.layer == 1 ? 4 : 1
            remainder = Int64(factor * h.bitRate % h.sampleRate)
            rate = Int64(h.sampleRate)
            phases = 0...(rate - 1)
        }

        /// Takes the next frame; false when it breaks the pattern (another bit rate, or padding
        /// no phase explains).
        mutating func add(_ h: MPEGAudioHeader) -> Bool {
            guard h.bitRate == bitRate else { return false }
            frames += 1
            if h.padding { padded += 1 }
            // padded == (frames * remainder + phase) / rate
            let low = padded * rate - frames * remainder, high = (padded + 1) * rate - frames * remainder - 1
            let l = max(phases.lowerBound, low), u = min(phases.upperBound, high)
            guard l <= u else { return false }
            phases = l...u
            return true
        }

        /// The padding slots in frames `0..<n`: the fewest and the most the allowed phases give.
        func slots(before n: Int64) -> ClosedRange<Int64>? {
            guard n >= 0, n <= Int64.max / max(1, remainder) / 2 else { return nil }
            return (n * remainder + phases.lowerBound) / rate...(n * remainder + phases.upperBound) / rate
        }
    }

    // MARK: - Parsing

    private var absolute: Int64 { bufferStart + Int64(cursor) }

    private func noteDamage(_ why: String) {
        if damageStart == nil {
            damageStart = absolute
            damageReason = why
        }
    }

    private func endDamage(_ events: inout [Event], resumed: Bool) {
        if resumed, let from = resumeAfterSeek {
            // A seek to an estimated offset: the bytes before the first frame there are not damage.
            events.append(.discontinuity(offset: absolute, skipped: absolute - from))
            resumeAfterSeek = nil
            damageStart = nil
            return
        }
        guard let start = damageStart else { return }
        let skipped = absolute - start
        events.append(.warning(MediaError(.invalidData, "skipped \(skipped) bytes that are not audio frames (\(damageReason))" + (resumed ? "; parsing resumed at the next confirmed frame" : "; the stream ends there"),
                                          offset: start, context: "audio stream")))
        damageStart = nil
    }

    private func compact() {
        if cursor > 0 {
            buffer.removeFirst(cursor)
            bufferStart += Int64(cursor)
            cursor = 0
        }
    }

    private func byte(_ i: Int) -> UInt8 { buffer[cursor + i] }

    private func parse(final: Bool) throws -> [Event] {
        var events: [Event] = []
        var packets: [Packet] = []
        defer { compact() }
        loop: while true {
            let available = buffer.count - cursor
            if available == 0 { break }
            // Tags at a frame boundary (or where a frame was expected); no tag's marker starts
            // with 0xFF, so a frame header (the common case) skips these checks.
            if byte(0) != 0xFF {
                // Bytes that may be the start of a tag's marker wait for the rest of it, whatever the chunking.
                if !final && available < 11 && Self.tagMarkers.contains(where: { m in
                    m.starts(with: buffer[cursor...].prefix(m.count)) && available < m.count }) {
                    return finishPush(events, packets)
                }
                if available >= 3 && byte(0) == 0x49 && byte(1) == 0x44 && byte(2) == 0x33 {   // "ID3"
                    if available < 10 { if final { break } else { return finishPush(events, packets) } }
                    if let size = ID3.v2TagSize(buffer[cursor..<cursor + 10]) {
                        if size > Self.maxTagBytes {
                            events.append(.warning(MediaError(.unsupported, "an ID3v2 tag of \(size) bytes, above the \(Self.maxTagBytes)-byte limit, is skipped without being read", offset: absolute, context: "ID3v2")))
                            skipBytes(size)
                            continue
                        }
                        if available < size {
                            if final {
                                events.append(.warning(MediaError(.endOfFile, "the stream ends inside an ID3v2 tag of \(size) bytes", offset: absolute, context: "ID3v2")))
                                cursor = buffer.count
                                break
                            }
                            return finishPush(events, packets)
                        }
                        var warnings: [String] = []
                        let before = tags
                        let tag = Array(buffer[cursor..<cursor + size])
                        ID3.readV2(tag, into: &tags, warnings: &warnings)
                        var read = ID3Metadata.Result(metadata: metadata, attachments: attachments, chapters: chapters)
                        ID3Metadata.parseV2(tag, into: &read)
                        (metadata, attachments, chapters) = (read.metadata, read.attachments, read.chapters)
                        for w in warnings { events.append(.warning(MediaError(.unsupported, w, offset: absolute, context: "ID3v2"))) }
                        if tags != before { events.append(.tags(tags)) }
                        noteStatedLength(into: &events)
                        cursor += size
                        continue
                    }
                }
                if available >= 3 && byte(0) == 0x54 && byte(1) == 0x41 && byte(2) == 0x47 {        // "TAG": ID3v1
                    if available < 128 && !final { return finishPush(events, packets) }
                    if available >= 128 {
                        let before = tags
                        let tag = Array(buffer[cursor..<cursor + 128])
                        ID3.readV1(tag, into: &tags)
                        var v1 = Metadata()
                        ID3Metadata.parseV1(tag, into: &v1)
                        if !v1.isEmpty && isADTS == true {
                            // FFmpeg's aac demuxer: the ID3v1 tag replaces the ID3v2 text tags, their PRIV frames staying.
                            metadata = Metadata(v1.entries + metadata.filter { $0.ffmpegKey.hasPrefix("id3v2_priv.") }, ffmpegMerge: .keepFirst)
                        } else if !v1.isEmpty && metadata.isEmpty {
                            metadata = Metadata(v1.entries, ffmpegMerge: .keepFirst)
                        }
                        if dataOffset != nil { trailingTagBytes += 128 }
                        if tags != before { events.append(.tags(tags)) }
                        cursor += 128
                        continue
                    }
                }
                if available >= 8 && buffer[cursor..<cursor + 8].elementsEqual(Self.apeMarker) {
                    if available < 32 && !final { return finishPush(events, packets) }
                    if available >= 32 {
                        let size = Int(byte(12)) | Int(byte(13)) << 8 | Int(byte(14)) << 16 | Int(byte(15)) << 24
                        let isHeader = byte(23) & 0x20 != 0
                        // A header is followed by the items and a footer (size counts both); a footer ends the tag.
                        skipBytes(isHeader ? 32 + max(0, size) : 32)
                        continue
                    }
                }
                if available >= 11 && buffer[cursor..<cursor + 11].elementsEqual(Self.lyricsMarker) {
                    // Each push scans only the bytes it added (the scan resumes where the last one
                    // stopped, less an end marker's length), so a tag fed byte by byte stays linear.
                    let resume = lyricsScannedTo.map { max(cursor, Int($0 - bufferStart) - 8) } ?? cursor
                    if let end = Self.lyricsEnd(in: buffer, from: resume) {
                        cursor = end
                        lyricsScannedTo = nil
                        continue
                    }
                    lyricsScannedTo = bufferStart + Int64(buffer.count)
                    if !final && available < 1 << 20 { return finishPush(events, packets) }
                    lyricsScannedTo = nil
                }
                if isADTS == nil && rawFamily == nil && byte(0) == 0x23 {   // "#": the AMR magic number
                    let wb = RawAudioFrame.amrWBMagic, nb = RawAudioFrame.amrNBMagic
                    let head = buffer[cursor..<min(buffer.count, cursor + wb.count)]
                    if head.elementsEqual(wb) || head.starts(with: nb) {
                        let wide = head.elementsEqual(wb)
                        rawFamily = wide ? .amrWB : .amrNB
                        cursor += wide ? wb.count : nb.count
                        continue
                    }
                    if !final && available < wb.count && (wb.starts(with: head) || nb.starts(with: head)) {
                        return finishPush(events, packets)
                    }
                }
                if isADTS == nil && available >= 4 && buffer[cursor..<cursor + 4].elementsEqual(Self.adifMarker) {
                    throw MediaError(.unsupported, "ADIF AAC has no frame headers to parse; MediaKit reads ADTS AAC", offset: absolute, context: "ADIF")
                }
            }
            // A frame.
            if tagsEnd == nil {
                // The first byte after the leading tags: a container this parser does not read
                // is refused now, not after every byte was pushed.
                switch otherContainer(final: final) {
                case .needMore: return finishPush(events, packets)
                case .found(_, let format?):
                    // A container: its demuxer reads the bytes from here on (ContainerPushReader).
                    let reader = ContainerPushReader(format: format, name: "pushed stream")
                    container = reader
                    containerBase = absolute
                    tagsEnd = absolute
                    let rest = Array(buffer[cursor...])
                    cursor = buffer.count
                    return events + (try containerEvents(reader.push(rest)))
                case .found(let name, nil):
                    throw MediaError(.unsupported, "the stream is \(name), which AudioStreamParser does not read (it reads \(Self.readsWhat))",
                                     offset: absolute, context: "audio stream")
                case .none: break
                }
                tagsEnd = absolute
            }
            switch frameAt(final: final) {
            case .needMore:
                if final {
                    if damageStart == nil && available > 0 { noteDamage("\(available) bytes at the end are not a whole frame") }
                    cursor = buffer.count
                    endDamage(&events, resumed: false)
                    break loop
                }
                return finishPush(events, packets)
            case .invalid(let why):
                if synced {
                    // The next header does not continue the stream: look again here, this time
                    // for any header the one after it confirms (a change of format), else resync.
                    synced = false
                    if final && absolute > (dataOffset ?? 0) && !isTagStart(cursor) {
                        // The stream ends inside a frame (or in bytes that are none): FFmpeg's
                        // parser hands those bytes on as a last packet; so does this one.
                        let rest = Array(buffer[cursor...])
                        packets.append(Packet(offset: absolute, data: rest, frames: 0, isTruncated: true))
                        truncatedTail = rest.count
                        maximumPacketSize = max(maximumPacketSize, rest.count)
                        if indexing && packetOffsets.count < Self.maxIndexedPackets {
                            packetOffsets.append(absolute)
                            lastIndexedSize = rest.count
                        }
                        events.append(.warning(MediaError(.truncated, "the stream ends \(rest.count) bytes after the last whole frame (\(why))", offset: absolute, context: "audio stream")))
                        cursor = buffer.count
                        break loop
                    }
                    continue
                }
                noteDamage(why)
                cursor += 1
                if dataFormat == nil, let start = tagsEnd, absolute - start >= Self.maxBytesBeforeSync {
                    let expected = fileTypeHint.map { "a \($0) stream, as the hint says, or any of " } ?? ""
                    throw MediaError(.unsupported, "no frame or container signature in the \(Self.maxBytesBeforeSync) bytes after offset \(start): the stream is not \(expected)what AudioStreamParser reads (\(Self.readsWhat))",
                                     offset: start, context: "audio stream")
                }
            case .frame(let size, let frames, let mpeg, let adts, let raw):
                if !synced {
                    synced = true
                    endDamage(&events, resumed: true)
                }
                if dataFormat == nil {
                    announce(mpeg: mpeg, adts: adts, raw: raw, into: &events)
                } else if let m = mpeg, let last = lastMPEG, !last.continues(m) {
                    // The packets before the change are reported before it (in their format).
                    if !packets.isEmpty {
                        events.append(.packets(packets))
                        packets.removeAll()
                    }
                    dataFormat = DataFormat(codec: m.codec, sampleRate: m.sampleRate, channels: m.channels, framesPerPacket: m.samplesPerFrame)
                    events.append(.warning(MediaError(.unsupported, "the stream changes to \(m.codec) \(m.sampleRate) Hz at this frame", offset: absolute, context: "audio stream")))
                    events.append(.dataFormat(dataFormat!))
                }
                lastMPEG = mpeg ?? lastMPEG
                lastADTS = adts ?? lastADTS
                lastRaw = raw ?? lastRaw
                let data = Array(buffer[cursor..<cursor + size])
                if !firstFrameChecked {
                    firstFrameChecked = true
                    if let m = mpeg, let vbr = MPEGAudioVBRHeader(frame: data, header: m) {
                        vbrHeader = vbr
                        vbrHeaderOffset = absolute
                        if let n = vbr.frames { events.append(.audioDataPacketCount(Int64(n))) }
                        if let n = vbr.bytes { events.append(.audioDataByteCount(Int64(n))) }
                        if !vbr.encoder.isEmpty { events.append(.encoderDelayAndPadding(delay: vbr.encoderDelay, padding: vbr.encoderPadding)) }
                        cursor += size
                        // As FFmpeg's mp3 demuxer after the VBR header: the first audio frame must
                        // be confirmed by the header after it (a frame cut short there is skipped
                        // up to the first one that is).
                        synced = false
                        continue
                    }
                }
                if dataOffset == nil {
                    dataOffset = absolute
                    events.append(.dataOffset(absolute))
                    if let d = durationEstimate() {
                        duration = d
                        events.append(.duration(d.seconds, estimated: d.estimated))
                    }
                    events.append(.readyToProducePackets)
                }
                if let m = mpeg, m.bitRate > 0 { noteBitRate(m.bitRate) }
                if let a = adts { noteBitRate(a.frameLength * 8 * a.sampleRate / max(1, a.samplesPerFrame)) }
                if raw != nil, frames > 0, let rate = dataFormat?.sampleRate { noteBitRate(size * 8 * rate / frames) }
                if indexing {
                    if packetOffsets.count < Self.maxIndexedPackets {
                        packetOffsets.append(absolute)
                        lastIndexedSize = size
                    }
                    if let m = mpeg {
                        if !cbrKnown { cbrKnown = true; cbr = CBRPattern(m) }
                        if cbr?.add(m) == false { cbr = nil }
                    } else {
                        cbr = nil
                    }
                }
                packets.append(Packet(offset: absolute, data: data, frames: frames))
                if packets.count == Self.packetsPerEvent {
                    events.append(.packets(packets))
                    packets = []
                    packets.reserveCapacity(Self.packetsPerEvent)
                }
                packetCount += 1
                audioBytes += Int64(size)
                sampleCount += Int64(frames)
                maximumPacketSize = max(maximumPacketSize, size)
                if adts != nil && firstADTSFrame == nil { firstADTSFrame = data }
                cursor += size
                if packetCount & (packetCount - 1) == 0 {
                    // The running estimates, refined at packets 1, 2, 4, 8 ... (the same places
                    // whatever the chunking), after the packets before them.
                    if !packets.isEmpty {
                        events.append(.packets(packets))
                        packets = []
                    }
                    refineEstimates(into: &events)
                }
            }
        }
        if final { endDamage(&events, resumed: false) }
        if !packets.isEmpty { events.append(.packets(packets)) }
        return events
    }

    private func noteBitRate(_ rate: Int) {
        if let first = firstBitRate {
            if first != rate { bitRateVaries = true }
        } else {
            firstBitRate = rate
        }
    }

    private func finishPush(_ events: [Event], _ packets: [Packet]) -> [Event] {
        packets.isEmpty ? events : events + [.packets(packets)]
    }

    private func skipBytes(_ n: Int) {
        let here = buffer.count - cursor
        if n <= here {
            cursor += n
        } else {
            skipRemaining = Int64(n - here)
            cursor = buffer.count
        }
    }

    private enum Attempt {
        case needMore
        case invalid(String)
        case frame(size: Int, frames: Int, mpeg: MPEGAudioHeader?, adts: ADTSHeader?, raw: RawAudioFrame? = nil)
    }

    /// The frame at the cursor, confirmed by the header after it (or by the end of the input).
    private func frameAt(final: Bool) -> Attempt {
        let available = buffer.count - cursor
        if let family = rawFamily, family == .amrNB || family == .amrWB {
            return amrFrameAt(final: final)
        }
        // An AC-3 or DTS header is read whole (up to 16 bytes) before it is judged, whatever the chunking.
        if isADTS == nil && !final && available < RawAudioFrame.headerBytes
            && (rawFamily != nil || byte(0) == 0x0B || byte(0) == 0x7F || byte(0) == 0x64) { return .needMore }
        if available < 7 { return final ? .invalid("\(available) trailing bytes") : .needMore }
        if isADTS == nil, let f = RawAudioFrame(buffer, at: cursor, family: rawFamily), lastRaw.map({ !synced || $0.continues(f) }) ?? true {
            return rawFrameAt(f, final: final)
        }
        if let family = rawFamily { return .invalid("no \(family == .dts ? "DTS" : "AC-3") sync word") }
        if isADTS != false, let a = ADTSHeader(buffer, at: cursor), lastADTS.map({ !synced || $0.continues(a) }) ?? true {
            if available < a.frameLength { return final ? .invalid("the stream ends inside an ADTS frame of \(a.frameLength) bytes") : .needMore }
            if !synced {
                if available < a.frameLength + 7 {
                    if !final { return .needMore }
                } else if let next = ADTSHeader(buffer, at: cursor + a.frameLength), !a.continues(next) {
                    return .invalid("an ADTS header not confirmed by the next one")
                } else if ADTSHeader(buffer, at: cursor + a.frameLength) == nil && !isTagStart(cursor + a.frameLength) {
                    return .invalid("an ADTS header not followed by another")
                }
            }
            isADTS = true
            return .frame(size: a.frameLength, frames: a.samplesPerFrame, mpeg: nil, adts: a)
        }
        if isADTS != true, let m = MPEGAudioHeader(buffer, at: cursor), lastMPEG.map({ !synced || $0.continues(m) }) ?? true {
            var size = m.frameSize
            if size == 0 {
                // Free format: the frame ends where the next header with the same fields starts.
                guard let next = nextHeader(like: m, from: cursor + m.sideInfoEnd) else {
                    if available < Self.maxFrameBytes && !final { return .needMore }
                    return .invalid("a free-format frame whose end cannot be found")
                }
                size = next - cursor
            }
            if available < size { return final ? .invalid("the stream ends inside a frame of \(size) bytes") : .needMore }
            if !synced {
                if available < size + 4 {
                    if !final { return .needMore }
                } else if let next = MPEGAudioHeader(buffer, at: cursor + size) {
                    if !m.continues(next) { return .invalid("an MPEG audio header not confirmed by the next one") }
                } else if !isTagStart(cursor + size) {
                    return .invalid("an MPEG audio header not followed by another")
                }
            }
            isADTS = false
            return .frame(size: size, frames: m.samplesPerFrame, mpeg: m, adts: nil)
        }
        return .invalid(isADTS == true ? "no ADTS sync word" : "no MPEG audio sync word")
    }

    /// An AC-3 / E-AC-3 or DTS frame at the cursor with the parts that join it (see
    /// ``RawAudioFrame/attachment(_:at:to:)``), confirmed by the header after it when not synced.
    private func rawFrameAt(_ f: RawAudioFrame, final: Bool) -> Attempt {
        var size = f.size
        let name = f.codec.rawValue.uppercased()
        let a = name.hasPrefix("A") || name.hasPrefix("E") ? "an" : "a"
        while true {
            if buffer.count - cursor < size { return final ? .invalid("the stream ends inside \(a) \(name) frame of \(size) bytes") : .needMore }
            let next = cursor + size
            if buffer.count - next < RawAudioFrame.headerBytes && !final { return .needMore }
            guard let extra = RawAudioFrame.attachment(buffer, at: next, to: f) else { break }
            size += extra
        }
        if !synced {
            let next = cursor + size
            if let n = RawAudioFrame(buffer, at: next, family: f.family) {
                if !f.continues(n) { return .invalid("\(a) \(name) header not confirmed by the next one") }
            } else if next < buffer.count && !isTagStart(next) {
                return .invalid("\(a) \(name) header not followed by another")
            }
        }
        rawFamily = f.family
        var frame = f
        if let d = f.dts {
            // DTS-HD: the channels of the extension substream's first asset (7.1 over a 5.1 core,
            // as the decoder outputs them), read now that the packet is whole, whatever the chunking.
            let j = cursor + (d.isCore ? f.size : 0)
            if j < cursor + size, let h = DTSHeader(buffer, at: j), !h.isCore, h.channels > 0 { frame.channels = h.channels }
        }
        return .frame(size: size, frames: f.samples, mpeg: nil, adts: nil, raw: frame)
    }

    /// An AMR frame at the cursor: its table-of-contents byte gives its size (RFC 4867 5.3).
    private func amrFrameAt(final: Bool) -> Attempt {
        guard let f = RawAudioFrame(buffer, at: cursor, family: rawFamily) else { return final ? .invalid("no AMR frame") : .needMore }
        if buffer.count - cursor < f.size { return final ? .invalid("the stream ends inside an AMR frame of \(f.size) bytes") : .needMore }
        return .frame(size: f.size, frames: f.samples, mpeg: nil, adts: nil, raw: f)
    }

    private func isTagStart(_ i: Int) -> Bool {
        guard i + 3 <= buffer.count else { return false }
        let t = (buffer[i], buffer[i + 1], buffer[i + 2])
        return t == (0x54, 0x41, 0x47) || t == (0x49, 0x44, 0x33) || t == (0x41, 0x50, 0x45) || t == (0x4C, 0x59, 0x52)
    }

    private func nextHeader(like m: MPEGAudioHeader, from start: Int) -> Int? {
        var i = start
        while i + 4 <= buffer.count && i - cursor < Self.maxFrameBytes {
            if buffer[i] == 0xFF, let n = MPEGAudioHeader(buffer, at: i), n.continues(m), n.bitRate == 0 { return i }
            i += 1
        }
        return nil
    }

    private func announce(mpeg: MPEGAudioHeader?, adts: ADTSHeader?, raw: RawAudioFrame?, into events: inout [Event]) {
        if let r = raw {
            dataFormat = DataFormat(codec: r.codec, sampleRate: r.sampleRate, channels: r.channels, framesPerPacket: r.samples)
            magicCookie = []
            fileFormat = r.fileFormat
            events.append(.fileFormat(r.fileFormat))
            events.append(.dataFormat(dataFormat!))
        } else if let m = mpeg {
            dataFormat = DataFormat(codec: m.codec, sampleRate: m.sampleRate, channels: m.channels, framesPerPacket: m.samplesPerFrame)
            magicCookie = []
            fileFormat = "mp3"
            events.append(.fileFormat("mp3"))
            events.append(.dataFormat(dataFormat!))
        } else if let a = adts {
            dataFormat = DataFormat(codec: "aac", sampleRate: a.sampleRate, channels: a.channels, framesPerPacket: a.samplesPerFrame,
                                    profile: Self.aacProfile(a.audioSpecificConfig.first.map { Int($0 >> 3) } ?? 0))
            fileFormat = "adts"
            events.append(.fileFormat("adts"))
            events.append(.dataFormat(dataFormat!))
            magicCookie = a.audioSpecificConfig
            events.append(.magicCookie(a.audioSpecificConfig))
        }
    }

    /// Exact from a Xing / VBRI frame count, else an ID3 `TLEN`, else from the stream's length
    /// and the first frame's bit rate.
    private func durationEstimate() -> (seconds: Double, estimated: Bool)? {
        guard let f = dataFormat, f.sampleRate > 0 else { return nil }
        if let frames = vbrHeader?.frames, frames > 0 {
            return (Double(frames) * Double(f.framesPerPacket) / Double(f.sampleRate), false)
        }
        if let stated = statedLength { return (stated, false) }
        guard let total = totalBytes, let start = dataOffset else { return nil }
        var rate = lastMPEG?.bitRate ?? 0
        if let a = lastADTS { rate = a.frameLength * 8 * a.sampleRate / max(1, a.samplesPerFrame) }
        if let r = lastRaw { rate = r.bitRate }
        guard rate > 0 else { return nil }
        return (Double(total - start) * 8 / Double(rate), true)
    }

    /// FFmpeg's profile names of the AAC object types an ADTS header can state (1 to 4).
    private static func aacProfile(_ objectType: Int) -> String? {
        [1: "Main", 2: "LC", 3: "SSR", 4: "LTP"][objectType]
    }

    /// An ID3 `TLEN` (the length in milliseconds) read: the duration, unless a Xing / VBRI frame count states it.
    private func noteStatedLength(into events: inout [Event]) {
        guard statedLength == nil, let text = metadata.first(where: { $0.nativeKey == "TLEN" || $0.nativeKey == "TLE" })?.value,
              let ms = Int64(text.trimmingCharacters(in: .whitespaces)), ms > 0 else { return }
        statedLength = Double(ms) / 1000
        if vbrHeader?.frames == nil, duration.map({ $0.estimated }) ?? true {
            duration = (statedLength!, false)
            events.append(.duration(statedLength!, estimated: false))
        }
    }

    /// The average bit rate of the packets so far and, when the duration is not stated, the
    /// duration it gives the stream's length; each reported when it changed.
    private func refineEstimates(into events: inout [Event]) {
        guard let f = dataFormat, f.sampleRate > 0, sampleCount > 0 else { return }
        let seconds = Double(sampleCount) / Double(f.sampleRate)
        let rate = constantBitRate ? firstBitRate! : Int((Double(audioBytes * 8) / seconds).rounded())
        if bitRate.map({ $0.bitsPerSecond != rate || $0.exact != constantBitRate }) ?? true {
            bitRate = (rate, constantBitRate)
            events.append(.bitRate(rate, exact: constantBitRate))
        }
        guard duration?.estimated ?? true, let total = totalBytes, let start = dataOffset, rate > 0, total > start else { return }
        let estimate = Double(total - start - trailingTagBytes) * 8 / Double(rate)
        if duration.map({ abs($0.seconds - estimate) > 1e-6 }) ?? true {
            duration = (estimate, true)
            events.append(.duration(estimate, estimated: true))
        }
    }
}

// MARK: - Properties (AudioFileStreamGetProperty)

extension AudioStreamParser {
    /// The format's layers, outermost first (Apple's `kAudioFileStreamProperty_FormatList`):
    /// HE-AAC v2 gives three (PS: stereo at the output rate; SBR: the core's channels at the
    /// output rate; the AAC LC core), HE-AAC two, everything else one (``dataFormat``). An ADTS
    /// header cannot signal SBR or PS: the first frame is decoded with ``registry``'s AAC decoder
    /// to find them (once, the first time this is read after the first frame); without a decoder
    /// the list is the header's alone. Empty before the format is known.
    public var formatList: [DataFormat] {
        guard let f = dataFormat else { return [] }
        if let cached = cachedFormatList { return cached }
        guard f.codec == "aac", let frame = firstADTSFrame, let cookie = magicCookie else { return [f] }
        var list = [f]
        let parameters = CodecParameters(mediaType: .audio, codec: "aac", extradata: cookie, sampleRate: f.sampleRate, channels: f.channels)
        if let decoder = try? registry.makeDecoder(for: parameters, timeBase: Rational(1, Int64(f.sampleRate)), threads: 1) {
            // The ADTS header (7 or 9 bytes) off: the decoder takes raw frames with the AudioSpecificConfig.
            let header = frame.count > 1 && frame[1] & 1 == 0 ? 9 : 7
            let packet = MediaKit.Packet(trackIndex: 0, pts: 0, dts: 0, duration: Int64(f.framesPerPacket), isKeyframe: true,
                                data: Array(frame.dropFirst(header)), timeBase: Rational(1, Int64(f.sampleRate)))
            var decoded: Frame?
            try? decoder.decode(packet) { if decoded == nil { decoded = $0 } }
            if decoded == nil { try? decoder.flush(); decoded = try? decoder.receive() }
            if let out = decoded, out.sampleRate > 0 {
                if out.sampleRate == 2 * f.sampleRate {
                    var sbr = f
                    sbr.sampleRate = out.sampleRate
                    sbr.framesPerPacket = 2 * f.framesPerPacket
                    sbr.profile = "HE-AAC"
                    list.insert(sbr, at: 0)
                    if f.channels == 1 && out.channels == 2 {
                        var ps = sbr
                        ps.channels = 2
                        ps.profile = "HE-AACv2"
                        list.insert(ps, at: 0)
                    }
                }
                cachedFormatList = list
            }
        } else {
            cachedFormatList = list
        }
        return list
    }

    /// The speakers as WAVE channel-mask bits (front left 0x1, front right 0x2, front centre
    /// 0x4, LFE 0x8 ...), as FFmpeg lays the format's channels out; nil before the format is
    /// known or when the header does not say (an AAC program config element, AMR's mono is 0x4).
    public var channelMask: UInt64? {
        guard let f = dataFormat else { return nil }
        if let a = lastRaw?.ac3 { return a.channelMask }
        if f.codec == "aac" {
            // FFmpeg's aac_channel_layout for the ADTS channel configurations 1 to 7.
            let masks: [Int: UInt64] = [1: 0x4, 2: 0x3, 3: 0x7, 4: 0x107, 5: 0x37, 6: 0x3F, 8: 0xFF]
            return masks[f.channels]
        }
        switch f.channels {
        case 1: return 0x4
        case 2: return 0x3
        default: return nil
        }
    }

    /// The largest packet the format allows, in bytes (Apple's `PacketSizeUpperBound`): MPEG
    /// audio's at the stream's version, layer and rate (the highest bit rate, padded), ADTS's
    /// 13-bit frame length, AC-3's 3840 and E-AC-3's 4096 bytes (A/52), DTS's 16384-byte core
    /// plus its extension substream, AMR's largest mode; nil before the format is known.
    public var packetSizeUpperBound: Int? {
        guard let f = dataFormat else { return nil }
        if let m = lastMPEG {
            // ISO/IEC 11172-3 and 13818-3: the highest bit rate of the version and layer.
            let top = m.version == 1 ? [448_000, 384_000, 320_000][m.layer - 1] : (m.layer == 1 ? 256_000 : 160_000)
            return m.layer == 1 ? (12 * top / m.sampleRate + 1) * 4 : (m.layer == 3 && m.version != 1 ? 72 : 144) * top / m.sampleRate + 1
        }
        switch f.codec {
        case "aac": return (1 << 13) - 1
        case "ac3": return 3840
        case "eac3": return 4096 * 2   // an independent frame and the dependent frame joined to it
        case "dts": return 16384 + 65536
        case "amr_nb": return RawAudioFrame.amrNBSizes.max()
        case "amr_wb": return RawAudioFrame.amrWBSizes.max()
        default: return nil
        }
    }

    /// The bytes of a packet on average, over the packets so far; nil before the first.
    public var averageBytesPerPacket: Double? {
        let n = packetCount + (truncatedTail == nil ? 0 : 1)
        return n > 0 ? Double(audioBytes + Int64(truncatedTail ?? 0)) / Double(n) : nil
    }

    /// The bytes of audio data (Apple's `AudioDataByteCount`): exact after ``finish()`` (the
    /// packets' bytes) or from a Xing / VBRI header; else the stream's length
    /// (``init(totalBytes:)``) less ``dataOffset`` and the trailing tags seen, flagged estimated;
    /// nil when neither is known.
    public var audioDataByteCount: (bytes: Int64, estimated: Bool)? {
        if ended && indexing && packetCount > 0 { return (audioBytes + Int64(truncatedTail ?? 0), false) }
        if let n = vbrHeader?.bytes, n > 0 { return (Int64(n), false) }
        guard let total = totalBytes, let start = dataOffset, total >= start else { return nil }
        return (total - start - trailingTagBytes, true)
    }

    /// The audio packets (Apple's `AudioDataPacketCount`): exact after ``finish()``, from a
    /// Xing / VBRI header, or from a container's header that lists its packets (WAV, AIFF, CAF,
    /// MP4); else ``audioDataByteCount`` over ``averageBytesPerPacket``, estimated.
    public var audioDataPacketCount: (packets: Int64, estimated: Bool)? {
        if ended && indexing && packetCount > 0 { return (packetCount + (truncatedTail == nil ? 0 : 1), false) }
        if let n = vbrHeader?.frames, n > 0 { return (Int64(n), false) }
        if let n = statedPacketCount { return (n, false) }
        guard let bytes = audioDataByteCount, let average = averageBytesPerPacket, average > 0 else { return nil }
        return (Int64((Double(bytes.bytes) / average).rounded()), true)
    }

    /// Priming and remainder (Apple's `PacketTableInfo`), from a LAME tag: nil without one.
    public var packetTableInfo: PacketTableInfo? {
        guard let vbr = vbrHeader, !vbr.encoder.isEmpty, let f = dataFormat else { return nil }
        // FFmpeg's mp3 demuxer: skip the encoder's delay plus the decoder's 528 + 1 samples at
        // the start, and the padding less those at the end.
        let priming = Int64(vbr.encoderDelay) + 529
        let remainder = max(0, Int64(vbr.encoderPadding) - 529)
        let packets = audioDataPacketCount.flatMap { $0.estimated ? nil : $0.packets }
        return PacketTableInfo(primingFrames: priming, remainderFrames: remainder,
                               validFrames: packets.map { $0 * Int64(f.framesPerPacket) - priming - remainder })
    }

    /// The first sample (per channel, from the stream's first) of packet `packet`: exact, every
    /// packet of these formats holding the same number; nil before the format is known.
    public func packetToFrame(_ packet: Int64) -> Int64? {
        guard let f = dataFormat, f.framesPerPacket > 0 else { return nil }
        return packet * Int64(f.framesPerPacket)
    }

    /// The packet that holds sample `frame` and the sample's place in it; nil before the format is known.
    public func frameToPacket(_ frame: Int64) -> (packet: Int64, frameOffset: Int)? {
        guard let f = dataFormat, f.framesPerPacket > 0, frame >= 0 else { return nil }
        return (frame / Int64(f.framesPerPacket), Int(frame % Int64(f.framesPerPacket)))
    }

    /// Where packet `packet` starts: exact for a packet parsed so far (without a discontinuity
    /// since the first) and for constant bit rate MPEG audio whose padding pins it (see
    /// ``seek(to:)``); else from the average packet size so far, flagged estimated.
    public func packetToByte(_ packet: Int64) -> (offset: Int64, estimated: Bool)? {
        guard let start = dataOffset, packet >= 0 else { return nil }
        if packet < Int64(packetOffsets.count) { return (packetOffsets[Int(packet)], false) }
        if constantBitRate, let pattern = cbr, let range = pattern.slots(before: packet) {
            return (start + packet * pattern.slotsPerFrame * pattern.slotBytes + range.lowerBound * pattern.slotBytes,
                    range.lowerBound != range.upperBound)
        }
        guard let average = averageBytesPerPacket else { return nil }
        return (start + Int64((Double(packet) * average).rounded()), true)
    }

    /// The packet that holds byte `offset` of the stream and the byte's place in it (Apple's
    /// `ByteToPacket`): exact inside the packets parsed so far; else from the average packet
    /// size, flagged estimated. Nil before the first packet or before ``dataOffset``.
    public func byteToPacket(_ offset: Int64) -> (packet: Int64, byteOffset: Int, estimated: Bool)? {
        guard let start = dataOffset, offset >= start, let average = averageBytesPerPacket, average > 0 else { return nil }
        if let last = packetOffsets.last, offset < last + Int64(lastIndexedSize) {
            // The last packet offset at or before `offset` (binary search).
            var low = 0, high = packetOffsets.count - 1
            while low < high {
                let mid = (low + high + 1) / 2
                if packetOffsets[mid] <= offset { low = mid } else { high = mid - 1 }
            }
            return (Int64(low), Int(offset - packetOffsets[low]), false)
        }
        let packet = Int64(Double(offset - start) / average)
        return (packet, Int(Double(offset - start) - Double(packet) * average), true)
    }

    private enum Signature { case needMore, found(String, ContainerFormat?), none }

    /// What ``AudioStreamParser`` reads, for messages.
    static let readsWhat = "MP3, ADTS AAC, AC-3 / E-AC-3, DTS, AMR, WAV / RF64, AIFF, CAF, FLAC, Ogg, MP4 / M4A with its moov first and MPEG-TS"

    /// The container whose signature starts at the cursor, with the format that reads it (nil
    /// for one this parser does not read: Matroska / WebM, AVI, IVF, WavPack, Monkey's Audio,
    /// Musepack, MPEG program streams), waiting for the bytes that tell while they may still be
    /// one: RIFF / RF64 WAVE, AIFF / AIFF-C, CAF, FLAC, Ogg, ISO BMFF (`ftyp`, or a QuickTime
    /// file's first `moov`, `mdat`, `free` or `wide` box), MPEG-TS (two sync bytes 188 apart).
    /// None of these starts an MPEG audio, ADTS, AC-3, DTS or AMR stream.
    private func otherContainer(final: Bool) -> Signature {
        let head = Array(buffer[cursor..<min(buffer.count, cursor + 12)])
        func text(_ r: Range<Int>) -> String? { head.count >= r.upperBound ? String(decoding: head[r], as: UTF8.self) : nil }
        // (signature, name, format, the bytes 8..<12 the format needs there)
        let magic: [([UInt8], String, ContainerFormat?, [String])] = [
            (Array("RIFF".utf8), "WAVE (RIFF)", .wav, ["WAVE"]), (Array("RF64".utf8), "RF64 WAVE", .wav, ["WAVE"]),
            (Array("FORM".utf8), "AIFF", .aiff, ["AIFF", "AIFC"]), (Array("caff".utf8), "CAF", .caf, []),
            (Array("fLaC".utf8), "FLAC", .flac, []), (Array("OggS".utf8), "Ogg", .ogg, []),
            ([0x1A, 0x45, 0xDF, 0xA3], "Matroska / WebM", nil, []), (Array("DKIF".utf8), "IVF", nil, []),
            (Array("wvpk".utf8), "WavPack", nil, []), (Array("MAC ".utf8), "Monkey's Audio", nil, []),
            (Array("MPCK".utf8), "Musepack", nil, []), ([0, 0, 1, 0xBA], "MPEG program stream", nil, []),
        ]
        for (bytes, name, format, form) in magic {
            if head.count < 4 {
                if !final && bytes.starts(with: head) { return .needMore }
                continue
            }
            guard head.prefix(4).elementsEqual(bytes) else { continue }
            if form.isEmpty { return .found(name, format) }
            guard let kind = text(8..<12) else { return final ? .found(name, format) : .needMore }
            if form.contains(kind) { return .found(name, format) }
            return .found("\(String(decoding: bytes, as: UTF8.self)) \(kind.debugDescription)" + (kind == "AVI " ? " (AVI)" : ""), nil)
        }
        if head.count < 8 && !final { return .needMore }
        if let box = text(4..<8), ["ftyp", "moov", "mdat", "free", "wide"].contains(box) { return .found("MP4 / M4A (ISO BMFF)", .mp4) }
        if head.first == 0x47 {
            if buffer.count - cursor <= 188 { return final ? .none : .needMore }
            if buffer[cursor + 188] == 0x47 { return .found("MPEG-TS", .mpegts) }
        }
        return .none
    }
}

// MARK: - Containers (ContainerPushReader)

extension AudioStreamParser {
    /// The events of what a container's demuxer produced. A failure after packets is thrown
    /// by the next push (the packets are reported first), else now.
    private func containerEvents(_ outputs: [ContainerPushReader.Output]) throws -> [Event] {
        var events: [Event] = []
        var packets: [Packet] = []
        func flush() {
            if !packets.isEmpty { events.append(.packets(packets)); packets = [] }
        }
        for output in outputs {
            switch output {
            case .opened(let track, let tagsRead, let pictures, let marks, let stated):
                containerTrack = track
                let p = track.parameters
                let name = container?.format.name ?? "container"
                fileFormat = name
                events.append(.fileFormat(name))
                dataFormat = DataFormat(codec: p.codec, sampleRate: p.sampleRate, channels: p.channels, framesPerPacket: Self.framesPerPacket(p))
                events.append(.dataFormat(dataFormat!))
                magicCookie = p.extradata
                if !p.extradata.isEmpty { events.append(.magicCookie(p.extradata)) }
                // Tags: an ID3v2 tag in front (read already), then the container's and the track's.
                var merged = metadata
                for entry in tagsRead.entries + track.metadata.entries { merged.append(entry) }
                metadata = merged
                attachments += pictures
                chapters += marks
                let before = tags
                Self.fill(&tags, from: merged)
                if tags != before { events.append(.tags(tags)) }
                if p.bitRate > 0 {
                    bitRate = (p.bitRate, Self.isPCM(p.codec))
                    events.append(.bitRate(p.bitRate, exact: Self.isPCM(p.codec)))
                }
                // The packet count the header states, where it lists the packets (a FLAC
                // STREAMINFO's gives only an estimate; Ogg and MPEG-TS none).
                if ["wav", "aiff", "caf", "mp4"].contains(name), track.sampleCount > 0 {
                    statedPacketCount = Int64(track.sampleCount)
                    events.append(.audioDataPacketCount(Int64(track.sampleCount)))
                }
                if let seconds = stated, seconds > 0, seconds.isFinite {
                    duration = (seconds, false)
                    events.append(.duration(seconds, estimated: false))
                }
            case .packet(let p):
                let offset = p.position >= 0 ? containerBase + p.position : -1
                if let np = p.newParameters, np.extradata != (magicCookie ?? []) || np.sampleRate != dataFormat?.sampleRate || np.channels != dataFormat?.channels {
                    // A chained Ogg link (the same codec, read as one track as FFmpeg reads it):
                    // its format and configuration, before its packets.
                    flush()
                    dataFormat = DataFormat(codec: np.codec, sampleRate: np.sampleRate, channels: np.channels, framesPerPacket: Self.framesPerPacket(np))
                    events.append(.dataFormat(dataFormat!))
                    magicCookie = np.extradata
                    if !np.extradata.isEmpty { events.append(.magicCookie(np.extradata)) }
                }
                if dataOffset == nil {
                    dataOffset = offset
                    events.append(.dataOffset(offset))
                    events.append(.readyToProducePackets)
                }
                let frames = containerTrack.map { Self.samples(p.duration, timeBase: p.timeBase, rate: $0.parameters.sampleRate) } ?? 0
                packets.append(Packet(offset: offset, data: p.data, frames: frames, isTruncated: p.isTruncated))
                if indexing && packetOffsets.count < Self.maxIndexedPackets && offset >= 0 {
                    packetOffsets.append(offset)
                    lastIndexedSize = p.data.count
                }
                if p.isTruncated {
                    truncatedTail = p.data.count
                } else {
                    packetCount += 1
                    audioBytes += Int64(p.data.count)
                    sampleCount += Int64(frames)
                }
                maximumPacketSize = max(maximumPacketSize, p.data.count)
                if packets.count == Self.packetsPerEvent { flush() }
            case .ended(let cut, let warnings):
                flush()
                for w in warnings { events.append(.warning(w)) }
                if let cut { events.append(.warning(cut)) }
            case .failed(let e):
                flush()
                if events.isEmpty { throw e }
                containerError = e
            }
        }
        flush()
        return events
    }

    /// The pushed bytes a container's reader keeps now (nil for the elementary streams), for the
    /// tests of its memory bound.
    var containerKeptBytes: Int? { container?.keptBytes }

    /// After the last packet of a container: the bit rate and duration of the packets, where
    /// the header did not state them.
    private func finishContainerEstimates(into events: inout [Event]) {
        // Samples are counted at the track's rate (a chained Ogg link's packets too, as their durations are).
        guard let rate = containerTrack?.parameters.sampleRate, rate > 0, sampleCount > 0 else { return }
        let seconds = Double(sampleCount) / Double(rate)
        if bitRate == nil {
            let rate = Int((Double(audioBytes * 8) / seconds).rounded())
            bitRate = (rate, false)
            events.append(.bitRate(rate, exact: false))
        }
        if duration == nil {
            duration = (seconds, false)
            events.append(.duration(seconds, estimated: false))
        }
    }

    /// `duration` ticks of `timeBase` in samples at `rate` (0 when unknown).
    static func samples(_ duration: Int64, timeBase: Rational, rate: Int) -> Int {
        guard duration > 0, rate > 0, timeBase.denominator > 0 else { return 0 }
        if timeBase.numerator == 1 && timeBase.denominator == Int64(rate) { return Int(duration) }
        return Int((Double(duration) * Double(timeBase.numerator) * Double(rate) / Double(timeBase.denominator)).rounded())
    }

    static func isPCM(_ codec: CodecID) -> Bool { codec.rawValue.hasPrefix("pcm_") }

    /// The samples per channel of every packet where the codec fixes them (AAC, AC-3, MPEG
    /// audio, AMR, FLAC with one block size, ALAC's frame length); 0 where they vary (PCM
    /// packets of a container, Opus, Vorbis, E-AC-3 ...): see ``Packet/frames``.
    static func framesPerPacket(_ p: CodecParameters) -> Int {
        let x = p.extradata
        func be32(_ i: Int) -> Int { x.count >= i + 4 ? Int(x[i]) << 24 | Int(x[i + 1]) << 16 | Int(x[i + 2]) << 8 | Int(x[i + 3]) : 0 }
        switch p.codec.rawValue {
        case "aac": return 1024
        case "ac3": return 1536
        case "mp1": return 384
        case "mp2": return 1152
        case "mp3": return p.sampleRate >= 32000 ? 1152 : 576
        case "amr_nb": return 160
        case "amr_wb": return 320
        case "flac":
            // STREAMINFO (34 bytes; 42 with "fLaC" and the block header): minimum and maximum block size.
            let base = x.count >= 42 && x.starts(with: Array("fLaC".utf8)) ? 8 : 0
            guard x.count >= base + 4 else { return 0 }
            let low = Int(x[base]) << 8 | Int(x[base + 1]), high = Int(x[base + 2]) << 8 | Int(x[base + 3])
            return low == high ? low : 0
        case "alac":
            // ALACSpecificConfig: frameLength first (24 bytes, or 36 behind an 'alac' atom's header).
            return x.count >= 36 ? be32(12) : be32(0)
        default: return 0
        }
    }

    /// The ID3-style fields of `tags` from a container's tags (the first value of each).
    static func fill(_ tags: inout AudioTags, from metadata: Metadata) {
        tags.title = tags.title ?? metadata["title"]
        tags.artist = tags.artist ?? metadata["artist"]
        tags.album = tags.album ?? metadata["album"]
        tags.track = tags.track ?? metadata["track"]
        tags.date = tags.date ?? metadata["date"]
        tags.genre = tags.genre ?? metadata["genre"]
        tags.comment = tags.comment ?? metadata["comment"]
    }
}
