import Foundation

/// How an ``AudioConverter`` makes its output channels from its input channels.
public enum ChannelMix: Sendable, Equatable {
    /// By position, as libswresample builds its matrix (`ffmpeg -ac N`): channels both layouts
    /// have pass through; a missing centre goes to left and right at `centerLevel`, missing
    /// surrounds to the front at `surroundLevel`, the LFE at `lfeLevel` (0: dropped); mono
    /// becomes both front channels at -3 dB. With `normalize` (nil: when the destination type is
    /// an integer, as libswresample does), rows whose gains add up above 1 are scaled down so
    /// that nothing clips. Levels are linear gains; the defaults are -3 dB (ITU-R BS.775).
    case automatic(centerLevel: Double = 0.5.squareRoot(), surroundLevel: Double = 0.5.squareRoot(), lfeLevel: Double = 0, normalize: Bool? = nil)
    /// Output channel `i` is input channel `map[i]`, or silence for nil: picks, reorders,
    /// duplicates and silences channels (`kAudioConverterChannelMap`).
    case map([Int?])
    /// Output channel `o` is the sum over input channels `i` of `matrix[o][i]` times input `i`.
    case matrix([[Double]])

    /// The automatic mix with FFmpeg's defaults.
    public static var standard: ChannelMix { .automatic() }
}

/// The mixing matrix of a conversion, and the mixing loop.
struct ChannelMatrix: Sendable {
    /// `coefficients[out][in]`.
    let coefficients: [[Double]]

    /// When each output channel is one input channel at gain 1, or silence: that input (or nil).
    var selection: [Int?]? {
        var sel: [Int?] = []
        for row in coefficients {
            let nz = row.indices.filter { row[$0] != 0 }
            if nz.isEmpty { sel.append(nil); continue }
            guard nz.count == 1, row[nz[0]] == 1 else { return nil }
            sel.append(nz[0])
        }
        return sel
    }

    /// The matrix `mix` asks for from layout `src` to `dst` (destination type `dstType` decides
    /// automatic normalisation).
    /// - Throws: ``MediaError`` `.invalidArgument` for a map or matrix of the wrong shape or an
    ///   input index out of range; `.unsupported` for layouts the automatic mix cannot place.
    init(_ mix: ChannelMix, from src: ChannelLayout, to dst: ChannelLayout, dstType: SampleFormat) throws {
        let nIn = src.count, nOut = dst.count
        switch mix {
        case .map(let map):
            guard map.count == nOut else {
                throw MediaError(.invalidArgument, "the channel map has \(map.count) entries; the destination has \(nOut) channels (\(dst))")
            }
            if let bad = map.enumerated().first(where: { $0.element.map { $0 < 0 || $0 >= nIn } ?? false }) {
                throw MediaError(.invalidArgument, "channel map entry \(bad.offset) names input channel \(bad.element!); the source has \(nIn) channels (0 to \(nIn - 1))")
            }
            coefficients = map.map { m in (0..<nIn).map { $0 == m ? 1.0 : 0.0 } }
        case .matrix(let m):
            guard m.count == nOut else {
                throw MediaError(.invalidArgument, "the mixing matrix has \(m.count) rows; the destination has \(nOut) channels (\(dst))")
            }
            if let bad = m.firstIndex(where: { $0.count != nIn }) {
                throw MediaError(.invalidArgument, "row \(bad) of the mixing matrix has \(m[bad].count) gains; the source has \(nIn) channels (\(src))")
            }
            if m.contains(where: { $0.contains { !$0.isFinite } }) {
                throw MediaError(.invalidArgument, "the mixing matrix holds a gain that is not a finite number")
            }
            coefficients = m
        case .automatic(let clev, let slev, let lfe, let normalize):
            coefficients = try Self.automatic(from: src, to: dst, center: clev, surround: slev, lfe: lfe,
                                              normalize: normalize ?? !dstType.isFloat)
        }
    }

    /// libswresample's `swr_build_matrix` for the 18 WAVE positions.
    static func automatic(from src: ChannelLayout, to dst: ChannelLayout, center clev: Double, surround slev: Double,
                          lfe lfeLevel: Double, normalize: Bool) throws -> [[Double]] {
        if src == dst {
            return (0..<src.count).map { o in (0..<src.count).map { $0 == o ? 1.0 : 0.0 } }
        }
        let inMask = src.mask, outMask = dst.mask
        guard inMask != 0, outMask != 0 else {
            throw MediaError(.unsupported, "channels \(src) -> \(dst): a layout that names a position twice cannot be mixed by position; give a channel map or matrix")
        }
        if src.positions.sorted(by: { $0.rawValue < $1.rawValue }) == dst.positions.sorted(by: { $0.rawValue < $1.rawValue }) {
            // The same speakers in another order: a reordering.
            return dst.positions.map { p in src.positions.map { $0 == p ? 1.0 : 0.0 } }
        }
        for (mask, role) in [(inMask, "source"), (outMask, "destination")] where !Self.sane(mask) {
            throw MediaError(.unsupported, "the \(role) layout \(role == "source" ? src : dst) cannot be mixed automatically (it needs a front channel and left/right pairs); give a channel map or matrix")
        }
        let FL = 0, FR = 1, FC = 2, LFE = 3, BL = 4, BR = 5, FLC = 6, FRC = 7, BC = 8, SL = 9, SR = 10
        func has(_ m: UInt64, _ c: Int) -> Bool { m & (1 << UInt64(c)) != 0 }
        var m = Array(repeating: Array(repeating: 0.0, count: 64), count: 64)
        for i in 0..<64 where has(inMask, i) && has(outMask, i) { m[i][i] = 1 }
        let unaccounted = inMask & ~outMask
        let sqrt1_2 = 0.5.squareRoot()
        func fail() -> MediaError {
            MediaError(.unsupported, "channels \(src) -> \(dst): the automatic mix has nowhere to put some source channels; give a channel map or matrix")
        }
        let stereo: UInt64 = 0b11
        if has(unaccounted, FC) {
            guard outMask & stereo == stereo else { throw fail() }
            let g = inMask & stereo == stereo ? clev : sqrt1_2
            m[FL][FC] += g
            m[FR][FC] += g
        }
        if unaccounted & stereo != 0 {
            guard has(outMask, FC) else { throw fail() }
            m[FC][FL] += sqrt1_2
            m[FC][FR] += sqrt1_2
            if has(inMask, FC) { m[FC][FC] = clev * 2.0.squareRoot() }
        }
        if has(unaccounted, BC) {
            if has(outMask, BL) { m[BL][BC] += sqrt1_2; m[BR][BC] += sqrt1_2 }
            else if has(outMask, SL) { m[SL][BC] += sqrt1_2; m[SR][BC] += sqrt1_2 }
            else if has(outMask, FL) { m[FL][BC] += slev * sqrt1_2; m[FR][BC] += slev * sqrt1_2 }
            else if has(outMask, FC) { m[FC][BC] += slev * sqrt1_2 }
            else { throw fail() }
        }
        if has(unaccounted, BL) {
            if has(outMask, BC) { m[BC][BL] += sqrt1_2; m[BC][BR] += sqrt1_2 }
            else if has(outMask, SL) {
                let g = has(inMask, SL) ? sqrt1_2 : 1
                m[SL][BL] += g; m[SR][BR] += g
            } else if has(outMask, FL) { m[FL][BL] += slev; m[FR][BR] += slev }
            else if has(outMask, FC) { m[FC][BL] += slev * sqrt1_2; m[FC][BR] += slev * sqrt1_2 }
            else { throw fail() }
        }
        if has(unaccounted, SL) {
            if has(outMask, BL) {
                let g = has(inMask, BL) ? sqrt1_2 : 1
                m[BL][SL] += g; m[BR][SR] += g
            } else if has(outMask, BC) { m[BC][SL] += sqrt1_2; m[BC][SR] += sqrt1_2 }
            else if has(outMask, FL) { m[FL][SL] += slev; m[FR][SR] += slev }
            else if has(outMask, FC) { m[FC][SL] += slev * sqrt1_2; m[FC][SR] += slev * sqrt1_2 }
            else { throw fail() }
        }
        if has(unaccounted, FLC) {
            if has(outMask, FL) { m[FL][FLC] += 1; m[FR][FRC] += 1 }
            else if has(outMask, FC) { m[FC][FLC] += sqrt1_2; m[FC][FRC] += sqrt1_2 }
            else { throw fail() }
        }
        if has(unaccounted, LFE) {
            if has(outMask, FC) { m[FC][LFE] += lfeLevel }
            else if has(outMask, FL) { m[FL][LFE] += lfeLevel * sqrt1_2; m[FR][LFE] += lfeLevel * sqrt1_2 }
            else { throw fail() }
        }
        // Rows and columns in the layouts' storage orders.
        var out = dst.positions.map { o in src.positions.map { m[o.rawValue][$0.rawValue] } }
        let maxSum = out.map { $0.reduce(0) { $0 + abs($1) } }.max() ?? 0
        if normalize && maxSum > 1 {
            out = out.map { $0.map { $0 / maxSum } }
        }
        return out
    }

    /// libswresample's `sane_layout`: a front speaker, and left/right positions in pairs.
    static func sane(_ mask: UInt64) -> Bool {
        guard mask & 0b111 != 0 else { return false }
        for pair: UInt64 in [0b11, 0b11 << 9, 0b11 << 4, 0b11 << 6] {
            let p = mask & pair
            if p != 0 && p != pair { return false }
        }
        return true
    }

    /// `out[o][i] = sum over k of c[o][k] * in[k][i]` for `i < n`.
    static func mix<T: PCMFloat>(_ rows: [[T]], _ input: [UnsafeMutablePointer<T>], into out: UnsafeMutablePointer<T>, row o: Int, count n: Int) {
        let row = rows[o]
        var first = true
        for k in row.indices where row[k] != 0 {
            let c = row[k], s = input[k]
            if first {
                for i in 0..<n { out[i] = c * s[i] }
                first = false
            } else {
                for i in 0..<n { out[i] += c * s[i] }
            }
        }
        if first { out.update(repeating: 0, count: n) }
    }
}
