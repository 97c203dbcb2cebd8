/// Xiph lacing of header packets, the extradata layout FFmpeg's Vorbis and Theora decoders
/// expect: the packet count minus one, the lacing of every packet but the last, then the packets.
func xiphLacing(_ packets: [[UInt8]]) -> [UInt8] {
    var out: [UInt8] = [UInt8(packets.count - 1)]
    for p in packets.dropLast() {
        var n = p.count
        while n >= 255 { out.append(255); n -= 255 }
        out.append(UInt8(n))
    }
    for p in packets { out += p }
    return out
}

/// The packets of Xiph-laced extradata (the inverse of ``xiphLacing(_:)``; also Matroska's
/// CodecPrivate for Vorbis and Theora, RFC 9559 section 5.1.4.1.28): the first byte is the
/// packet count minus one, then the size of every packet but the last in runs of 255-valued
/// bytes ended by a smaller one, then the packets; the last takes what remains. Nil when `p`
/// is empty or the sizes run past its end.
func xiphUnlacing(_ p: [UInt8]) -> [[UInt8]]? {
    guard let first = p.first else { return nil }
    var sizes: [Int] = []
    var at = 1, total = 0
    for _ in 0..<Int(first) {
        var n = 0
        while true {
            guard at < p.count else { return nil }
            let b = Int(p[at])
            at += 1
            n += b
            if b != 255 { break }
        }
        sizes.append(n)
        total += n
    }
    guard total <= p.count - at else { return nil }
    sizes.append(p.count - at - total)
    var out: [[UInt8]] = []
    out.reserveCapacity(sizes.count)
    for n in sizes {
        out.append(Array(p[at..<(at + n)]))
        at += n
    }
    return out
}
