/// Hard limits of the Matroska demuxer: what a hostile file can make it allocate or walk.
enum MatroskaLimits {
    /// The largest header element (Info, Tracks, Tags, Chapters, Cues, SeekHead ...) read into memory.
    static let maxHeaderElement: Int64 = 64 << 20
    /// The largest Block / SimpleBlock read.
    static let maxBlockSize: Int64 = 256 << 20
    /// The most tracks a file may declare.
    static let maxTracks = 1024
    /// The deepest element nesting followed inside a header element.
    static let maxDepth = 16
    /// The most frames one laced block may hold (the lace count is one byte).
    static let maxLaces = 256
    /// How many top-level elements the header walk reads before the first Cluster.
    static let maxHeaderElements = 4096
}

/// Element IDs (RFC 8794 EBML, RFC 9559 Matroska), with their marker bits.
enum MKVID {
    static let ebml: UInt32 = 0x1A45DFA3, docType: UInt32 = 0x4282, docTypeVersion: UInt32 = 0x4287
    static let void: UInt32 = 0xEC, crc32: UInt32 = 0xBF
    static let segment: UInt32 = 0x18538067
    static let seekHead: UInt32 = 0x114D9B74, seek: UInt32 = 0x4DBB, seekID: UInt32 = 0x53AB, seekPosition: UInt32 = 0x53AC
    static let info: UInt32 = 0x1549A966, timecodeScale: UInt32 = 0x2AD7B1, duration: UInt32 = 0x4489, title: UInt32 = 0x7BA9
    static let muxingApp: UInt32 = 0x4D80, writingApp: UInt32 = 0x5741
    static let tracks: UInt32 = 0x1654AE6B, trackEntry: UInt32 = 0xAE
    static let trackNumber: UInt32 = 0xD7, trackUID: UInt32 = 0x73C5, trackType: UInt32 = 0x83
    static let flagLacing: UInt32 = 0x9C, flagEnabled: UInt32 = 0xB9, flagDefault: UInt32 = 0x88, flagForced: UInt32 = 0x55AA
    static let defaultDuration: UInt32 = 0x23E383, trackTimestampScale: UInt32 = 0x23314F
    static let name: UInt32 = 0x536E, language: UInt32 = 0x22B59C, languageBCP47: UInt32 = 0x22B59D
    static let codecID: UInt32 = 0x86, codecPrivate: UInt32 = 0x63A2, codecDelay: UInt32 = 0x56AA, seekPreRoll: UInt32 = 0x56BB
    static let video: UInt32 = 0xE0, pixelWidth: UInt32 = 0xB0, pixelHeight: UInt32 = 0xBA
    static let displayWidth: UInt32 = 0x54B0, displayHeight: UInt32 = 0x54BA, displayUnit: UInt32 = 0x54B2
    static let stereoMode: UInt32 = 0x53B8, flagInterlaced: UInt32 = 0x9A
    static let colour: UInt32 = 0x55B0, matrixCoefficients: UInt32 = 0x55B1, range: UInt32 = 0x55B9
    static let transferCharacteristics: UInt32 = 0x55BA, primaries: UInt32 = 0x55BB, bitsPerChannel: UInt32 = 0x55B2
    static let projection: UInt32 = 0x7670, projectionType: UInt32 = 0x7671
    static let audio: UInt32 = 0xE1, samplingFrequency: UInt32 = 0xB5, outputSamplingFrequency: UInt32 = 0x78B5
    static let channels: UInt32 = 0x9F, bitDepth: UInt32 = 0x6264
    static let contentEncodings: UInt32 = 0x6D80, contentEncoding: UInt32 = 0x6240
    static let contentEncodingScope: UInt32 = 0x5032, contentEncodingType: UInt32 = 0x5033
    static let contentCompression: UInt32 = 0x5034, contentCompAlgo: UInt32 = 0x4254, contentCompSettings: UInt32 = 0x4255
    static let contentEncryption: UInt32 = 0x5035
    static let cluster: UInt32 = 0x1F43B675, timecode: UInt32 = 0xE7, position: UInt32 = 0xA7, prevSize: UInt32 = 0xAB
    static let simpleBlock: UInt32 = 0xA3, blockGroup: UInt32 = 0xA0, block: UInt32 = 0xA1
    static let blockDuration: UInt32 = 0x9B, referenceBlock: UInt32 = 0xFB, discardPadding: UInt32 = 0x75A2
    static let cues: UInt32 = 0x1C53BB6B, cuePoint: UInt32 = 0xBB, cueTime: UInt32 = 0xB3, cueTrackPositions: UInt32 = 0xB7
    static let cueTrack: UInt32 = 0xF7, cueClusterPosition: UInt32 = 0xF1
    static let tags: UInt32 = 0x1254C367, tag: UInt32 = 0x7373, targets: UInt32 = 0x63C0, tagTrackUID: UInt32 = 0x63C5
    static let simpleTag: UInt32 = 0x67C8, tagName: UInt32 = 0x45A3, tagString: UInt32 = 0x4487
    static let chapters: UInt32 = 0x1043A770, editionEntry: UInt32 = 0x45B9, chapterAtom: UInt32 = 0xB6
    static let chapterTimeStart: UInt32 = 0x91, chapterTimeEnd: UInt32 = 0x92, chapterDisplay: UInt32 = 0x80, chapString: UInt32 = 0x85
    static let attachments: UInt32 = 0x1941A469, attachedFile: UInt32 = 0x61A7, fileName: UInt32 = 0x466E
    static let fileMimeType: UInt32 = 0x4660, fileData: UInt32 = 0x465C

    /// The elements that may follow a Cluster at the Segment's level: where a Cluster of
    /// unknown size ends (RFC 9559, section 6.2: "unknown-sized element").
    static let segmentChildren: Set<UInt32> = [seekHead, info, tracks, cluster, cues, tags, chapters, attachments]

    /// Readable names for error messages (the element path).
    static let names: [UInt32: String] = [
        ebml: "EBML", segment: "Segment", seekHead: "SeekHead", info: "Info", tracks: "Tracks", trackEntry: "TrackEntry",
        cluster: "Cluster", cues: "Cues", tags: "Tags", chapters: "Chapters", attachments: "Attachments",
        simpleBlock: "SimpleBlock", blockGroup: "BlockGroup", block: "Block", timecode: "Timestamp",
        blockDuration: "BlockDuration", referenceBlock: "ReferenceBlock", discardPadding: "DiscardPadding",
        codecPrivate: "CodecPrivate", video: "Video", audio: "Audio", contentEncodings: "ContentEncodings",
        cuePoint: "CuePoint", tag: "Tag", simpleTag: "SimpleTag", void: "Void", seek: "Seek", colour: "Colour",
        editionEntry: "EditionEntry", chapterAtom: "ChapterAtom", attachedFile: "AttachedFile",
    ]

    static func name(_ id: UInt32) -> String { names[id] ?? String(format: "0x%X", id) }
}

/// EBML variable-size integers (RFC 8794, section 4): element IDs, data sizes and the signed
/// differences of EBML lacing.
enum EBMLVarInt {
    /// The length in bytes (1...8) of a variable-size integer from its first byte; nil for 0x00.
    static func length(_ first: UInt8) -> Int? {
        first == 0 ? nil : first.leadingZeroBitCount + 1
    }

    /// An element ID (1 to 4 bytes, marker bits kept) at `i`; nil when malformed or cut short.
    static func id(_ b: UnsafeRawBufferPointer, at i: Int) -> (id: UInt32, length: Int)? {
        guard i < b.count, let n = length(b[i]), n <= 4, i + n <= b.count else { return nil }
        var v: UInt32 = 0
        for k in 0..<n { v = v << 8 | UInt32(b[i + k]) }
        return (v, n)
    }

    /// A data size or unsigned lacing size (1 to 8 bytes, marker removed) at `i`; `unknown` is
    /// true when every value bit is 1 (RFC 8794 section 6.2: an unknown size). Nil when malformed
    /// or cut short.
    static func size(_ b: UnsafeRawBufferPointer, at i: Int) -> (value: UInt64, length: Int, unknown: Bool)? {
        guard i < b.count, let n = length(b[i]), i + n <= b.count else { return nil }
        var v = UInt64(b[i]) & (0xFF >> UInt64(n))
        for k in 1..<n { v = v << 8 | UInt64(b[i + k]) }
        let allOnes: UInt64 = (1 << UInt64(7 * n)) - 1
        return (v, n, v == allOnes)
    }

    /// A signed lacing difference (RFC 9559 section 10.3.3: the unsigned value minus
    /// 2^(7n-1) - 1) at `i`; nil when malformed or cut short.
    static func signed(_ b: UnsafeRawBufferPointer, at i: Int) -> (value: Int64, length: Int)? {
        guard let s = size(b, at: i) else { return nil }
        let bias = (Int64(1) << Int64(7 * s.length - 1)) - 1
        return (Int64(s.value) - bias, s.length)
    }
}

/// Block lacing (RFC 9559 section 10.3): the sizes of the frames of one Block's data.
enum MatroskaLacing {
    /// The lacing kinds of a Block's flags (bits 1-2).
    enum Kind: Int {
        case none = 0, xiph = 1, fixed = 2, ebml = 3
    }

    /// The frame sizes of a Block whose data (after the track number, timestamp and flags)
    /// is `data`, and how many bytes of lacing header precede the frames.
    /// - Returns: `.failure` with the reason when the lacing does not fit the data.
    static func frameSizes(_ data: UnsafeRawBufferPointer, kind: Kind) -> Result<(sizes: [Int], headerLength: Int), LacingProblem> {
        if kind == .none { return .success(([data.count], 0)) }
        guard data.count >= 1 else { return .failure("a laced block needs a frame count byte, the block has no data") }
        let count = Int(data[0]) + 1
        var pos = 1
        var sizes: [Int] = []
        sizes.reserveCapacity(count)
        var total = 0
        switch kind {
        case .none:
            break
        case .xiph:
            for k in 0..<(count - 1) {
                var n = 0
                while true {
                    guard pos < data.count else { return .failure("Xiph lacing: the size of frame \(k) runs past the block's end") }
                    let b = Int(data[pos])
                    pos += 1
                    n += b
                    if b != 255 { break }
                }
                sizes.append(n)
                total += n
            }
        case .ebml:
            guard count > 1 else { break }
            guard let first = EBMLVarInt.size(data, at: pos), !first.unknown, first.value <= UInt64(data.count) else {
                return .failure("EBML lacing: the first frame size is not a valid size within the block")
            }
            pos += first.length
            var n = Int64(first.value)
            sizes.append(Int(n))
            total += Int(n)
            for k in 1..<(count - 1) {
                guard let d = EBMLVarInt.signed(data, at: pos) else {
                    return .failure("EBML lacing: the size difference of frame \(k) runs past the block's end")
                }
                pos += d.length
                n += d.value
                guard n >= 0 && n <= Int64(data.count) else {
                    return .failure("EBML lacing: frame \(k) has size \(n), outside the block")
                }
                sizes.append(Int(n))
                total += Int(n)
            }
        case .fixed:
            let left = data.count - pos
            guard left % count == 0 else {
                return .failure("fixed-size lacing: \(left) bytes do not split into \(count) equal frames")
            }
            return .success((Array(repeating: left / count, count: count), pos))
        }
        let left = data.count - pos - total
        guard left >= 0 else {
            return .failure("the laced frame sizes add up to \(total + pos) bytes, the block has \(data.count)")
        }
        sizes.append(left)
        return .success((sizes, pos))
    }

    /// Why a Block's lacing could not be read.
    struct LacingProblem: Error, ExpressibleByStringInterpolation {
        let reason: String
        init(stringLiteral value: String) { reason = value }
        init(stringInterpolation: DefaultStringInterpolation) { reason = String(stringInterpolation: stringInterpolation) }
    }
}

/// One element found in memory: its ID, where its data lies in the buffer, and its file offset.
struct EBMLElement {
    let id: UInt32
    /// Absolute file offset of the element's ID.
    let offset: Int64
    /// Range of the data in the buffer being walked.
    let data: Range<Int>
}

/// Walks the children of a master element held in memory. Every child's size is checked
/// against its parent's end; errors name the element path and the absolute file offset.
struct EBMLWalker {
    let bytes: [UInt8]
    /// Absolute file offset of `bytes[0]`.
    let base: Int64
    /// The element path of the master being walked ("Segment/Tracks/TrackEntry[0]").
    let path: String
    let file: String
    private(set) var position: Int
    let end: Int

    init(bytes: [UInt8], base: Int64, range: Range<Int>, path: String, file: String) {
        self.bytes = bytes
        self.base = base
        self.position = range.lowerBound
        self.end = range.upperBound
        self.path = path
        self.file = file
    }

    /// A walker over the children of `element` (a child of this walker's master).
    func children(of element: EBMLElement, name: String? = nil) -> EBMLWalker {
        EBMLWalker(bytes: bytes, base: base, range: element.data, path: path + "/" + (name ?? MKVID.name(element.id)), file: file)
    }

    func error(_ message: String, at offset: Int64? = nil, _ kind: MediaError.Kind = .invalidData) -> MediaError {
        MediaError(kind, message, path: file, offset: offset ?? base + Int64(position), context: path)
    }

    /// The next child, or nil at the master's end.
    /// - Throws: `.invalidData` naming the path and offset for a malformed ID or size, or a
    ///   size past the master's end (an unknown size inside a header element too).
    mutating func next() throws -> EBMLElement? {
        if position >= end { return nil }
        let at = position
        let parsed: (UInt32, Int, UInt64, Int, Bool)? = bytes.withUnsafeBytes { raw in
            let b = UnsafeRawBufferPointer(rebasing: raw[..<end])
            guard let id = EBMLVarInt.id(b, at: at), let size = EBMLVarInt.size(b, at: at + id.length) else { return nil }
            return (id.id, id.length, size.value, size.length, size.unknown)
        }
        guard let (id, idLength, size, sizeLength, unknown) = parsed else {
            throw error("malformed element header (ID or size) in the \(end - at) bytes left of the parent", at: base + Int64(at))
        }
        let dataStart = at + idLength + sizeLength
        let left = end - dataStart
        guard !unknown else {
            throw error("element \(MKVID.name(id)) has an unknown size inside a header element", at: base + Int64(at))
        }
        guard size <= UInt64(left) else {
            throw error("element \(MKVID.name(id)) declares \(size) bytes, its parent has \(left) left", at: base + Int64(at))
        }
        position = dataStart + Int(size)
        return EBMLElement(id: id, offset: base + Int64(at), data: dataStart..<(dataStart + Int(size)))
    }

    /// An unsigned integer element (0 to 8 bytes, RFC 8794 section 7.2).
    func uint(_ e: EBMLElement) throws -> UInt64 {
        guard e.data.count <= 8 else { throw error("unsigned integer \(MKVID.name(e.id)) is \(e.data.count) bytes, at most 8", at: e.offset) }
        return bytes[e.data].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A signed integer element.
    func int(_ e: EBMLElement) throws -> Int64 {
        guard e.data.count <= 8 else { throw error("signed integer \(MKVID.name(e.id)) is \(e.data.count) bytes, at most 8", at: e.offset) }
        guard !e.data.isEmpty else { return 0 }
        let v = bytes[e.data].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let shift = UInt64(64 - 8 * e.data.count)
        return Int64(bitPattern: v << shift) >> Int64(shift)
    }

    /// A float element (0, 4 or 8 bytes).
    func float(_ e: EBMLElement) throws -> Double {
        switch e.data.count {
        case 0: return 0
        case 4: return Double(Float(bitPattern: UInt32(truncatingIfNeeded: try uint(e))))
        case 8: return Double(bitPattern: try uint(e))
        default: throw error("float \(MKVID.name(e.id)) is \(e.data.count) bytes, 4 or 8 expected", at: e.offset)
        }
    }

    /// A string element (ASCII or UTF-8), up to its first zero byte.
    func string(_ e: EBMLElement) -> String {
        let raw = bytes[e.data]
        let cut = raw.firstIndex(of: 0) ?? raw.endIndex
        return String(decoding: raw[raw.startIndex..<cut], as: UTF8.self)
    }

    /// A binary element's bytes.
    func binary(_ e: EBMLElement) -> [UInt8] { Array(bytes[e.data]) }
}
