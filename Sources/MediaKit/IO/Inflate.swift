/// A zlib (RFC 1950) / DEFLATE (RFC 1951) decompressor, for containers that compress their
/// payloads (Matroska's ContentCompression with ContentCompAlgo 0, which mkvmerge applies to
/// PGS, VobSub and text subtitle tracks by default). Written after RFC 1951's decoding
/// algorithm (canonical Huffman codes decoded by code length counts), with the checks zlib's
/// `inflate` makes: header check, stored-block length complement, over-subscribed and
/// incomplete codes, distances past the start of the output, the Adler-32 trailer. Bytes
/// after the end of the stream are ignored, as zlib leaves them unread.
///
/// Output is bounded: a stream that would inflate past `limit` bytes is an error (never an
/// unbounded allocation), as is any damage, each naming the input byte where it was found.
enum Inflate {
    /// Why a stream does not inflate, and the offset (into the compressed input) where that was found.
    struct Failure: Error, Equatable, Sendable {
        /// What is wrong ("the stream ends inside a block", "an invalid Huffman code" ...).
        var reason: String
        /// The byte of the input being read when the problem was found.
        var offset: Int
    }

    /// The bytes a zlib stream (2-byte header, DEFLATE blocks, Adler-32) inflates to, at most `limit` of them.
    static func zlib(_ input: ArraySlice<UInt8>, limit: Int) -> Result<[UInt8], Failure> {
        input.withUnsafeBufferPointer { buf in
            guard buf.count >= 2 else {
                return .failure(Failure(reason: "\(buf.count) bytes are too few for a zlib header", offset: 0))
            }
            let cmf = Int(buf[0]), flg = Int(buf[1])
            guard (cmf << 8 | flg) % 31 == 0 else {
                return .failure(Failure(reason: String(format: "the zlib header %02X %02X fails its check (not a zlib stream)", cmf, flg), offset: 0))
            }
            guard cmf & 0x0F == 8 else {
                return .failure(Failure(reason: "the zlib compression method is \(cmf & 0x0F), not 8 (deflate)", offset: 0))
            }
            guard cmf >> 4 <= 7 else {
                return .failure(Failure(reason: "the zlib window size field is \(cmf >> 4), above 7 (32 KiB)", offset: 0))
            }
            guard flg & 0x20 == 0 else {
                return .failure(Failure(reason: "the zlib stream needs a preset dictionary, which no container supplies", offset: 1))
            }
            var state = InflateState(input: buf, position: 2, limit: limit)
            do {
                try state.blocks()
                let end = state.position
                guard end + 4 <= buf.count else {
                    throw Failure(reason: "the stream ends before its Adler-32 checksum", offset: buf.count)
                }
                let stored = UInt32(buf[end]) << 24 | UInt32(buf[end + 1]) << 16 | UInt32(buf[end + 2]) << 8 | UInt32(buf[end + 3])
                let computed = adler32(state.output)
                guard stored == computed else {
                    throw Failure(reason: String(format: "the Adler-32 checksum is %08X, the data's is %08X", stored, computed), offset: end)
                }
                return .success(state.output)
            } catch let f as Failure {
                return .failure(f)
            } catch {
                return .failure(Failure(reason: "\(error)", offset: state.position))
            }
        }
    }

    /// The Adler-32 checksum (RFC 1950 section 8.2) of `bytes`.
    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        var i = 0
        while i < bytes.count {
            // 5552: the most bytes before b can overflow 32 bits (zlib's NMAX).
            let end = min(bytes.count, i + 5552)
            while i < end {
                a &+= UInt32(bytes[i])
                b &+= a
                i += 1
            }
            a %= 65521
            b %= 65521
        }
        return b << 16 | a
    }
}

/// A canonical Huffman code: how many codes each length (1-15) has, and the symbols in code order.
private struct HuffmanCode {
    var counts = [Int](repeating: 0, count: 16)
    var symbols: [Int]

    /// When a set of lengths that does not fill the code space is accepted.
    enum Incomplete {
        /// Never (the code length code).
        case never
        /// Only a single one-bit code (zlib's rule for a dynamic block's literal and distance codes).
        case singleCode
        /// Always (the fixed distance code: 30 of the 32 five-bit codes).
        case always
    }

    /// Builds the code of `lengths` (one per symbol, 0: unused). Throws for an over-subscribed set,
    /// and for an incomplete one that `incomplete` does not accept.
    init(lengths: ArraySlice<Int>, what: String, offset: Int, incomplete: Incomplete) throws {
        symbols = []
        symbols.reserveCapacity(lengths.count)
        for l in lengths { counts[l] += 1 }
        let used = lengths.count - counts[0]
        counts[0] = 0
        var left = 1
        var longest = 0
        for len in 1...15 {
            left <<= 1
            left -= counts[len]
            if left < 0 { throw Inflate.Failure(reason: "the \(what) code lengths are over-subscribed", offset: offset) }
            if counts[len] > 0 { longest = len }
        }
        if left > 0 && used > 0 && !(incomplete == .always || (incomplete == .singleCode && longest == 1)) {
            throw Inflate.Failure(reason: "the \(what) code lengths are incomplete", offset: offset)
        }
        var firstOfLength = [Int](repeating: 0, count: 16)
        for len in 1..<15 { firstOfLength[len + 1] = firstOfLength[len] + counts[len] }
        symbols = [Int](repeating: 0, count: used)
        for (symbol, len) in zip(0..., lengths) where len > 0 {
            symbols[firstOfLength[len]] = symbol
            firstOfLength[len] += 1
        }
    }
}

/// The decoder's state over one input buffer.
private struct InflateState {
    let input: UnsafeBufferPointer<UInt8>
    /// The next input byte not yet in `bitBuffer`.
    var position: Int
    let limit: Int
    var bitBuffer: UInt32 = 0
    var bitCount = 0
    var output: [UInt8] = []

    init(input: UnsafeBufferPointer<UInt8>, position: Int, limit: Int) {
        self.input = input
        self.position = position
        self.limit = max(0, limit)
    }

    // Lengths and distances: base values and extra bits (RFC 1951 section 3.2.5).
    static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
                               4097, 6145, 8193, 12289, 16385, 24577]
    static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]
    /// The order code length code lengths are stored in (section 3.2.7).
    static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    mutating func bits(_ need: Int) throws -> Int {
        while bitCount < need {
            guard position < input.count else {
                throw Inflate.Failure(reason: "the stream ends inside a block", offset: position)
            }
            bitBuffer |= UInt32(input[position]) << UInt32(bitCount)
            position += 1
            bitCount += 8
        }
        let v = bitBuffer & ((1 << UInt32(need)) - 1)
        bitBuffer >>= UInt32(need)
        bitCount -= need
        return Int(v)
    }

    mutating func decode(_ h: HuffmanCode, what: String) throws -> Int {
        var code = 0, first = 0, index = 0
        for len in 1...15 {
            code |= try bits(1)
            let count = h.counts[len]
            if code - first < count { return h.symbols[index + code - first] }
            index += count
            first += count
            first <<= 1
            code <<= 1
        }
        throw Inflate.Failure(reason: "an invalid \(what) Huffman code", offset: max(0, position - 1))
    }

    mutating func reserve(_ n: Int) throws {
        if output.count + n > limit {
            throw Inflate.Failure(reason: "the data inflates past \(limit) bytes, the most allowed", offset: max(0, position - 1))
        }
    }

    mutating func blocks() throws {
        var last = 0
        while last == 0 {
            last = try bits(1)
            let at = max(0, position - 1)
            switch try bits(2) {
            case 0: try stored()
            case 1: try codes(Self.fixedLiterals, Self.fixedDistances)
            case 2:
                let (lit, dist) = try dynamicCodes()
                try codes(lit, dist)
            default:
                throw Inflate.Failure(reason: "a block of the reserved type 3", offset: at)
            }
        }
        // The trailer starts at the next whole byte: the bits left in the buffer are padding.
        bitBuffer = 0
        bitCount = 0
    }

    mutating func stored() throws {
        bitBuffer = 0
        bitCount = 0
        guard position + 4 <= input.count else {
            throw Inflate.Failure(reason: "the stream ends inside a stored block's length", offset: position)
        }
        let len = Int(input[position]) | Int(input[position + 1]) << 8
        let nlen = Int(input[position + 2]) | Int(input[position + 3]) << 8
        guard len == ~nlen & 0xFFFF else {
            throw Inflate.Failure(reason: "a stored block's length \(len) does not match its complement", offset: position)
        }
        position += 4
        guard position + len <= input.count else {
            throw Inflate.Failure(reason: "the stream ends inside a stored block of \(len) bytes", offset: input.count)
        }
        try reserve(len)
        output.append(contentsOf: UnsafeBufferPointer(rebasing: input[position..<(position + len)]))
        position += len
    }

    static let fixedLiterals: HuffmanCode = {
        var lengths = [Int](repeating: 8, count: 288)
        for s in 144..<256 { lengths[s] = 9 }
        for s in 256..<280 { lengths[s] = 7 }
        // The fixed code is complete by construction; `try!` cannot fail.
        return try! HuffmanCode(lengths: lengths[...], what: "literal/length", offset: 0, incomplete: .never)
    }()
    static let fixedDistances: HuffmanCode = {
        try! HuffmanCode(lengths: [Int](repeating: 5, count: 30)[...], what: "distance", offset: 0, incomplete: .always)
    }()

    mutating func dynamicCodes() throws -> (HuffmanCode, HuffmanCode) {
        let at = position
        let nlen = try bits(5) + 257, ndist = try bits(5) + 1, ncode = try bits(4) + 4
        guard nlen <= 286, ndist <= 30 else {
            throw Inflate.Failure(reason: "a dynamic block declares \(nlen) literal/length and \(ndist) distance codes (at most 286 and 30)", offset: at)
        }
        var lengths = [Int](repeating: 0, count: 19)
        for i in 0..<ncode { lengths[Self.codeLengthOrder[i]] = try bits(3) }
        let lencode = try HuffmanCode(lengths: lengths[...], what: "code length", offset: position, incomplete: .never)
        lengths = [Int](repeating: 0, count: nlen + ndist)
        var i = 0
        while i < nlen + ndist {
            let symbol = try decode(lencode, what: "code length")
            if symbol < 16 {
                lengths[i] = symbol
                i += 1
                continue
            }
            var value = 0, repeatCount: Int
            switch symbol {
            case 16:
                guard i > 0 else { throw Inflate.Failure(reason: "a repeated code length with no length before it", offset: position) }
                value = lengths[i - 1]
                repeatCount = 3 + (try bits(2))
            case 17: repeatCount = 3 + (try bits(3))
            default: repeatCount = 11 + (try bits(7))
            }
            guard i + repeatCount <= nlen + ndist else {
                throw Inflate.Failure(reason: "code length repeats run past the \(nlen + ndist) codes", offset: position)
            }
            for _ in 0..<repeatCount {
                lengths[i] = value
                i += 1
            }
        }
        guard lengths[256] != 0 else {
            throw Inflate.Failure(reason: "a dynamic block has no end-of-block code", offset: position)
        }
        let lit = try HuffmanCode(lengths: lengths[0..<nlen], what: "literal/length", offset: position, incomplete: .singleCode)
        let dist = try HuffmanCode(lengths: lengths[nlen...], what: "distance", offset: position, incomplete: .singleCode)
        return (lit, dist)
    }

    mutating func codes(_ lit: HuffmanCode, _ dist: HuffmanCode) throws {
        while true {
            let symbol = try decode(lit, what: "literal/length")
            if symbol < 256 {
                try reserve(1)
                output.append(UInt8(truncatingIfNeeded: symbol))
                continue
            }
            if symbol == 256 { return }
            let l = symbol - 257
            guard l < 29 else { throw Inflate.Failure(reason: "the invalid length symbol \(symbol)", offset: max(0, position - 1)) }
            let length = Self.lengthBase[l] + (try bits(Self.lengthExtra[l]))
            let d = try decode(dist, what: "distance")
            guard d < 30 else { throw Inflate.Failure(reason: "the invalid distance symbol \(d)", offset: max(0, position - 1)) }
            let distance = Self.distanceBase[d] + (try bits(Self.distanceExtra[d]))
            guard distance <= output.count else {
                throw Inflate.Failure(reason: "a distance of \(distance) reaches before the start of the \(output.count) bytes inflated", offset: max(0, position - 1))
            }
            try reserve(length)
            var from = output.count - distance
            for _ in 0..<length {
                output.append(output[from])
                from += 1
            }
        }
    }
}
