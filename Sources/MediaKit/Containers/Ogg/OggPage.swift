/// Hard limits of the Ogg demuxer: sizes above them are a hostile or broken file (`.limit`).
enum OggLimits {
    /// The largest packet reassembled across pages (a Vorbis comment with cover art can be megabytes).
    static let maxPacketSize = 16 << 20
    /// Pages read at open to find every stream's headers before giving up.
    static let maxHeaderPages = 1024
    /// Logical streams in one file.
    static let maxStreams = 64
    /// Bytes read per step while searching for the next page after damage.
    static let resyncChunk = 1 << 16
    /// Damage reports kept (older ones are counted, not kept).
    static let maxWarnings = 64
}

/// Page header flags (RFC 3533 section 6).
struct OggPageFlags: OptionSet {
    let rawValue: UInt8
    /// The first packet continues one from the previous page.
    static let continued = OggPageFlags(rawValue: 1)
    /// First page of a logical stream.
    static let beginning = OggPageFlags(rawValue: 2)
    /// Last page of a logical stream.
    static let end = OggPageFlags(rawValue: 4)
}

/// One Ogg page: the 27-byte header, the lacing (segment) table and the body.
struct OggPage {
    /// File offset of the capture pattern "OggS".
    var offset: Int64
    var flags: OggPageFlags
    /// The granule position: codec-defined time at the end of the last packet that ends here, -1 if none.
    var granule: Int64
    var serial: UInt32
    var sequence: UInt32
    /// Lacing values: a packet ends at every value below 255.
    var segments: [UInt8]
    var body: [UInt8]

    /// Bytes the page occupies in the file.
    var size: Int64 { Int64(27 + segments.count + body.count) }
}

/// CRC-32 of Ogg pages: polynomial 0x04C11DB7, initial value 0, no reflection, no final XOR.
enum OggCRC {
    static let table: [UInt32] = (0..<256).map { i -> UInt32 in
        var r = UInt32(i) << 24
        for _ in 0..<8 { r = (r & 0x8000_0000) != 0 ? (r << 1) ^ 0x04C1_1DB7 : r << 1 }
        return r
    }

    static func update(_ crc: UInt32, _ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var c = crc
        table.withUnsafeBufferPointer { t in
            for b in bytes { c = (c << 8) ^ t[Int(((c >> 24) ^ UInt32(b)) & 0xFF)] }
        }
        return c
    }

    static func update(_ crc: UInt32, _ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { update(crc, $0) }
    }
}

/// Reads pages one after the other from a file, checking every CRC. After damage
/// (a bad CRC, a bad version, bytes that are not a page) it searches forward for the
/// next "OggS" that starts a page with a correct CRC, and records what it skipped.
struct OggPageReader {
    let source: ByteSource
    /// Offset of the next page to read.
    private(set) var position: Int64
    /// What was skipped, in order (at most ``OggLimits/maxWarnings``).
    private(set) var warnings: [MediaError] = []
    /// How many damaged regions were skipped (including those not kept in ``warnings``).
    private(set) var damageCount = 0

    init(source: ByteSource, start: Int64 = 0) {
        self.source = source
        self.position = start
    }

    private enum Attempt {
        case page(OggPage)
        /// Not a valid page here; the reason says why.
        case invalid(String)
        /// A page header is here but the file ends inside the page.
        case truncated(String)
    }

    /// The next valid page, or nil at the end of the file.
    /// - Throws: `.truncated` when the file ends inside a page (the pages before it were returned);
    ///   the next call returns nil.
    mutating func next() throws -> OggPage? {
        var damageStart: Int64?
        var firstReason = ""
        defer {
            if let start = damageStart {
                note(MediaError(.invalidData, "skipped \(position - start) bytes that are not a valid Ogg page (\(firstReason)); reading resumed at the next page with a correct CRC",
                                path: source.path, offset: start, context: "Ogg page"))
            }
        }
        while try source.available(from: position, upTo: 1) > 0 {
            switch try attempt(at: position) {
            case .page(let page):
                position += page.size
                return page
            case .truncated(let why):
                let at = position
                position = source.size
                if damageStart == nil {
                    throw MediaError(.truncated, why, path: source.path, offset: at, context: "Ogg page")
                }
                // Truncation after junk: report both.
                firstReason += "; then " + why
                return nil
            case .invalid(let why):
                if damageStart == nil { damageStart = position; firstReason = why }
                // Search for the next capture pattern after this position.
                guard let next = try findCapture(from: position + 1) else {
                    position = source.size
                    return nil
                }
                position = next
            }
        }
        return nil
    }

    private mutating func note(_ e: MediaError) {
        damageCount += 1
        if warnings.count < OggLimits.maxWarnings { warnings.append(e) }
    }

    /// The offset of the next "OggS" at or after `start`, reading in bounded chunks.
    private func findCapture(from start: Int64) throws -> Int64? {
        var at = start
        while at + 4 <= source.size {
            let chunk = try source.readUpTo(at: at, count: OggLimits.resyncChunk + 3)
            if chunk.count < 4 { return nil }
            var i = 0
            while i + 4 <= chunk.count {
                if chunk[i] == 0x4F && chunk[i + 1] == 0x67 && chunk[i + 2] == 0x67 && chunk[i + 3] == 0x53 {
                    return at + Int64(i)
                }
                i += 1
            }
            at += Int64(chunk.count - 3)
        }
        return nil
    }

    private func attempt(at offset: Int64) throws -> Attempt {
        // A page is at most 27 + 255 + 255 * 255 bytes.
        let remaining = try source.available(from: offset, upTo: 27 + 255 + 255 * 255)
        if remaining < 27 {
            let head = try source.readUpTo(at: offset, count: 4)
            if head == [0x4F, 0x67, 0x67, 0x53] {
                return .truncated("the file ends \(remaining) bytes into a page header (27 bytes expected)")
            }
            return .invalid("\(remaining) trailing bytes without a capture pattern")
        }
        let header = try source.read(at: offset, count: 27)
        guard header[0] == 0x4F, header[1] == 0x67, header[2] == 0x67, header[3] == 0x53 else {
            return .invalid("expected the capture pattern \"OggS\"")
        }
        guard header[4] == 0 else { return .invalid("page version \(header[4]), expected 0") }
        let nsegs = Int(header[26])
        guard remaining >= Int64(27 + nsegs) else {
            return .truncated("the file ends inside the lacing table of a page (\(nsegs) entries)")
        }
        let segments = try source.read(at: offset + 27, count: nsegs)
        let bodySize = segments.reduce(0) { $0 + Int($1) }
        guard remaining >= Int64(27 + nsegs + bodySize) else {
            return .truncated("the page declares \(27 + nsegs + bodySize) bytes but the file ends after \(remaining)")
        }
        let body = try source.read(at: offset + 27 + Int64(nsegs), count: bodySize)
        let stored = UInt32(header[22]) | UInt32(header[23]) << 8 | UInt32(header[24]) << 16 | UInt32(header[25]) << 24
        var zeroed = header
        zeroed[22] = 0; zeroed[23] = 0; zeroed[24] = 0; zeroed[25] = 0
        var crc = OggCRC.update(0, zeroed)
        crc = OggCRC.update(crc, segments)
        crc = OggCRC.update(crc, body)
        guard crc == stored else {
            return .invalid(String(format: "CRC mismatch: the page says %08x, its bytes give %08x", stored, crc))
        }
        var granule: UInt64 = 0
        for i in 0..<8 { granule |= UInt64(header[6 + i]) << (8 * UInt64(i)) }
        func le32(_ i: Int) -> UInt32 {
            UInt32(header[i]) | UInt32(header[i + 1]) << 8 | UInt32(header[i + 2]) << 16 | UInt32(header[i + 3]) << 24
        }
        return .page(OggPage(offset: offset, flags: OggPageFlags(rawValue: header[5]), granule: Int64(bitPattern: granule),
                             serial: le32(14), sequence: le32(18), segments: segments, body: body))
    }
}

extension OggPage {
    /// The page as it is stored: the 27-byte header (capture pattern, version 0, flags,
    /// granule position, serial, sequence, CRC), the lacing values and the body. The CRC is
    /// computed over the page with its CRC field zeroed (RFC 3533 section 6); ``offset`` is ignored.
    func serialized() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(27 + segments.count + body.count)
        out += [0x4F, 0x67, 0x67, 0x53, 0, flags.rawValue]
        let g = UInt64(bitPattern: granule)
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: g >> (8 * UInt64(i)))) }
        for v in [serial, sequence, 0] {
            for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(i)))) }
        }
        out.append(UInt8(segments.count))
        out += segments
        out += body
        let crc = OggCRC.update(0, out)
        for i in 0..<4 { out[22 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        return out
    }
}

/// Lays the packets of one logical stream out in pages (RFC 3533 section 5): a packet of
/// n bytes is n / 255 lacing values of 255 and one of n % 255 (so a packet whose size is a
/// multiple of 255, 0 included, ends with a 0); a page holds at most 255 lacing values, and a
/// packet that does not fit continues on the next page, which is flagged `continued`. A page's
/// granule position is that of the last packet that ends on it, -1 when none does.
///
/// The caller decides where pages end besides the 255-value limit: ``endPage()`` closes the
/// current page (headers on pages of their own, a page duration); ``finish()`` closes the last
/// page with the end-of-stream flag, an empty one when the stream has no packet left to close.
struct OggPageWriter {
    /// The logical stream's serial number.
    let serial: UInt32
    /// Pages completed and not yet taken, oldest first.
    private(set) var pages: [OggPage] = []
    private var sequence: UInt32 = 0
    private var segments: [UInt8] = []
    private var body: [UInt8] = []
    private var continued = false
    private var granule: Int64 = -1
    /// Granule of the last page that had one (a page's granule never goes below it).
    private(set) var lastGranule: Int64 = 0
    /// True once a page was completed (the first one is the beginning-of-stream page).
    private var started = false

    init(serial: UInt32) { self.serial = serial }

    /// True when the current page holds nothing yet.
    var pageIsEmpty: Bool { segments.isEmpty }

    /// Appends one packet ending at `granule`; pages that fill up on the way are completed.
    mutating func append(_ packet: [UInt8], granule: Int64) {
        var left = packet.count
        var at = 0
        while true {
            if segments.count == 255 { closePage(eos: false) }
            let take = min(left, 255)
            segments.append(UInt8(take))
            body += packet[at..<(at + take)]
            at += take
            left -= take
            if take < 255 { break }
        }
        self.granule = max(granule, lastGranule)
    }

    /// Completes the current page if it holds anything.
    mutating func endPage() {
        if !segments.isEmpty { closePage(eos: false) }
    }

    /// Completes the last page, flagged end-of-stream (an empty page when nothing is pending).
    mutating func finish() {
        closePage(eos: true)
    }

    /// Removes and returns the completed pages.
    mutating func takePages() -> [OggPage] {
        defer { pages.removeAll(keepingCapacity: true) }
        return pages
    }

    private mutating func closePage(eos: Bool) {
        var flags: OggPageFlags = []
        if !started { flags.insert(.beginning) }
        if continued { flags.insert(.continued) }
        if eos { flags.insert(.end) }
        // A packet continues on the next page when the last lacing value is 255.
        let endsInPacket = segments.last == 255
        let g = granule
        if g != -1 { lastGranule = g }
        pages.append(OggPage(offset: -1, flags: flags, granule: g == -1 && eos ? lastGranule : g, serial: serial,
                             sequence: sequence, segments: segments, body: body))
        started = true
        sequence &+= 1
        segments.removeAll(keepingCapacity: true)
        body.removeAll(keepingCapacity: true)
        continued = endsInPacket
        granule = -1
    }
}
