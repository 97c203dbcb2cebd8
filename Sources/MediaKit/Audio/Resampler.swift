import Foundation
import MediaKitSIMD

/// What the processor offers the resampler.
enum CPUFeatures {
    /// AVX2 and FMA (x86-64-v3): the resampler then runs MediaKitSIMD's loops (`mediakit_simd_resample*`). Read once from
    /// /proc/cpuinfo; `MEDIAKIT_NO_AVX2=1` in the environment turns it off (to test the other path).
    static let avx2FMA: Bool = {
        #if arch(x86_64)
        if ProcessInfo.processInfo.environment["MEDIAKIT_NO_AVX2"] == "1" || mediakit_simd_avx2_available() == 0 { return false }
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
              let flags = info.split(separator: "\n").first(where: { $0.hasPrefix("flags") }) else { return false }
        let set = Set(flags.split(separator: " ").map(String.init))
        return set.contains("avx2") && set.contains("fma")
        #else
        return false
        #endif
    }()

    /// Tests turn the AVX2 loops off to check the portable ones (set before converting).
    nonisolated(unsafe) static var useAVX2 = avx2FMA
}

/// How hard the resampler works. Every preset is a Kaiser-windowed sinc; they differ in
/// where the passband ends, where the stopband starts (fractions of the lower rate's Nyquist
/// frequency) and how far the stopband is attenuated.
public enum ResampleQuality: String, Sendable, CaseIterable {
    /// Passband to 0.80, stopband from 1.20, 70 dB: for previews and speech.
    case low
    /// The default: passband flat (±0.0001 dB) to 0.90, stopband from 1.10, 100 dB down;
    /// flatter, steeper and deeper than libswresample's default (32 taps, Kaiser beta 9, cutoff 0.97).
    case medium
    /// Passband to 0.90, stopband from 1.0 (no aliasing at all), 130 dB down, computed in
    /// 64-bit float: soxr's high quality.
    case high

    /// Passband end, stopband start (fractions of the lower rate's Nyquist) and attenuation (dB).
    var design: (pass: Double, stop: Double, attenuation: Double) {
        switch self {
        case .low: return (0.80, 1.20, 70)
        case .medium: return (0.90, 1.10, 100)
        case .high: return (0.90, 1.00, 130)
        }
    }
}

/// The time grid of a rate change: output frame `j` sits at input time `lead + j * M / L`,
/// with `L / M` the ratio of the rates in lowest terms.
struct RateRatio: Sendable, Equatable {
    /// Output steps per `down` input frames (upsampling factor), and input frames per `up` outputs.
    let up: Int, down: Int

    init(from inRate: Int, to outRate: Int) {
        var a = inRate, b = outRate
        while b != 0 { (a, b) = (b, a % b) }
        up = outRate / a
        down = inRate / a
    }

    var isIdentity: Bool { up == down }

    /// Output frames for `n` input frames: `round(n * up / down)` (halves rounded up).
    func outputFrames(for n: Int64) -> Int64 {
        guard n > 0 else { return 0 }
        if isIdentity { return n }
        let u = Int64(up), d = Int64(down)
        // n * up can exceed Int64 for absurd n; split to stay exact.
        let q = n / d, r = n % d
        return q * u + (2 * r * u + d) / (2 * d)
    }
}

/// A polyphase windowed-sinc filter bank for one ratio and preset.
struct PolyphaseFilter<T: PCMFloat> {
    /// Taps per output (a multiple of 8).
    let taps: Int
    /// Input frames before (and after) the output time that the filter reaches: the filter
    /// spans inputs `base - half + 1 ... base + half`.
    let half: Int
    /// Filter phases stored: `ratio.up` (exact), or `phases + 1` for linear interpolation
    /// between phases when `ratio.up` is too large for a table.
    let phases: Int
    /// True when coefficients are interpolated between ``phases`` table rows.
    let interpolated: Bool
    /// `phases` (or `phases + 1`) rows of ``taps`` coefficients (``table``'s, kept alive by it).
    let coefficients: UnsafeMutablePointer<T>
    let table: FilterTable<T>

    /// The largest exact table (phases); beyond it, 2048 phases are interpolated.
    static var maxExactPhases: Int { 4096 }

    /// The most coefficients a filter may have (32 MiB of f32): bounds the memory a rate pair can ask for.
    static var maxCoefficients: Int { 1 << 23 }

    /// Half length, taps, rows and whether rows are interpolated, for a ratio and preset.
    static func shape(_ ratio: RateRatio, _ quality: ResampleQuality) -> (half: Int, taps: Int, phases: Int, rows: Int, interpolated: Bool) {
        let (pass, stop, att) = quality.design
        // Kaiser's formula: the order from the attenuation and the transition width (in cycles
        // per sample of the lower rate); r, the lower rate's Nyquist as a fraction of the
        // input's, stretches it in input frames.
        let order = (att - 7.95) / (14.357 * (stop - pass) / 2)
        let r = min(1.0, Double(ratio.up) / Double(ratio.down))
        // Half the length, to the nearest multiple of 4, so that the taps fill whole 8-lane steps.
        let h = max(4, Int(min(1e9, (order / 2 / r / 4).rounded())) * 4)
        let interpolated = ratio.up > maxExactPhases
        let phases = interpolated ? 2048 : ratio.up
        return (h, 2 * h, phases, interpolated ? phases + 1 : phases, interpolated)
    }

    /// The filter of `ratio` and `quality`: its table designed once and shared
    /// (``FilterTable/shared(_:_:)``).
    init(ratio: RateRatio, quality: ResampleQuality) {
        let shape = Self.shape(ratio, quality)
        half = shape.half
        taps = shape.taps
        interpolated = shape.interpolated
        phases = shape.phases
        table = FilterTable<T>.shared(ratio, quality)
        coefficients = table.coefficients
    }

    /// Designs the coefficient rows of `ratio` and `quality` into `table` (room for rows x taps).
    static func design(_ ratio: RateRatio, _ quality: ResampleQuality, into table: UnsafeMutablePointer<T>) {
        let (pass, stop, att) = quality.design
        let beta = att > 50 ? 0.1102 * (att - 8.7) : 0.5842 * pow(att - 21, 0.4) + 0.07886 * (att - 21)
        let r = min(1.0, Double(ratio.up) / Double(ratio.down))
        let cutoff = r * (pass + stop) / 2
        let shape = Self.shape(ratio, quality)
        let h = shape.half, taps = shape.taps
        let i0beta = Self.besselI0(beta)
        var row = [Double](repeating: 0, count: 2 * h)
        for p in 0..<shape.rows {
            let frac = Double(p) / Double(shape.phases)
            var sum = 0.0
            for i in 0..<(2 * h) {
                let d = Double(i - h + 1) - frac
                let x = d / Double(h)
                let w = abs(x) >= 1 ? 0 : Self.besselI0(beta * (1 - x * x).squareRoot()) / i0beta
                let s = d == 0 ? 1 : sin(Double.pi * cutoff * d) / (Double.pi * cutoff * d)
                row[i] = cutoff * s * w
                sum += row[i]
            }
            // Every phase passes DC at exactly unity gain.
            for i in 0..<(2 * h) { table[p * taps + i] = T(row[i] / sum) }
        }
    }

    static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0, k = 1.0
        let q = x * x / 4
        while term > sum * 1e-17 {
            term *= q / (k * k)
            sum += term
            k += 1
        }
        return sum
    }
}

/// One filter's coefficients, immutable once designed and shared by every converter of the
/// same sample type, ratio and preset: designing a table costs more than resampling a second
/// of audio (decoding 1 s of 44.1 kHz stereo WAV to 16 kHz, perf counted 40 % of the time in
/// the design), which a program converting many short files would pay for each.
final class FilterTable<T: PCMFloat>: @unchecked Sendable {
    /// Written once in init, read only after: safe to share across threads.
    let coefficients: UnsafeMutablePointer<T>

    private init(_ ratio: RateRatio, _ quality: ResampleQuality) {
        let shape = PolyphaseFilter<T>.shape(ratio, quality)
        coefficients = .allocate(capacity: shape.rows * shape.taps)
        coefficients.initialize(repeating: 0, count: shape.rows * shape.taps)
        PolyphaseFilter<T>.design(ratio, quality, into: coefficients)
    }

    deinit { coefficients.deallocate() }

    /// The table of `ratio` and `quality`, from the cache of the last ``FilterCache/limit``
    /// tables used, designed (outside the lock) when missing.
    static func shared(_ ratio: RateRatio, _ quality: ResampleQuality) -> FilterTable<T> {
        let key = FilterCache.Key(type: ObjectIdentifier(T.self), up: ratio.up, down: ratio.down, quality: quality)
        if let t = FilterCache.shared.get(key) as? FilterTable<T> { return t }
        let t = FilterTable(ratio, quality)
        FilterCache.shared.put(key, t)
        return t
    }
}

/// The filter tables used last (most recent last), shared process-wide.
final class FilterCache: @unchecked Sendable {
    struct Key: Hashable {
        let type: ObjectIdentifier
        let up: Int, down: Int
        let quality: ResampleQuality
    }

    /// Tables kept: enough for the rate pairs a program uses at once; each is at most
    /// ``PolyphaseFilter/maxCoefficients`` coefficients, most far fewer.
    static let limit = 8
    static let shared = FilterCache()

    private let lock = NSLock()          // guards entries
    private var entries: [(key: Key, table: AnyObject)] = []

    func get(_ key: Key) -> AnyObject? {
        lock.lock()
        defer { lock.unlock() }
        guard let i = entries.firstIndex(where: { $0.key == key }) else { return nil }
        let e = entries.remove(at: i)
        entries.append(e)
        return e.table
    }

    func put(_ key: Key, _ table: AnyObject) {
        lock.lock()
        defer { lock.unlock() }
        entries.removeAll { $0.key == key }
        entries.append((key, table))
        if entries.count > Self.limit { entries.removeFirst(entries.count - Self.limit) }
    }
}

/// The time stage of a conversion: keeps a history per channel, resamples (or, at equal
/// rates, delays), and cuts leading and trailing frames on request.
///
/// Output frame `j` is the input signal at time `lead + j * down / up` (input frames); after
/// ``finish()`` exactly `round((n - lead - trail) * up / down)` frames have come out for
/// `n` input frames, however the input was cut.
final class TimeStage<T: PCMFloat> {
    let ratio: RateRatio
    let channels: Int
    let filter: PolyphaseFilter<T>?
    let lead: Int64, trail: Int64
    /// Input frames that must follow an input frame before outputs at its time can be made.
    let hold: Int64

    private var buffers: [UnsafeMutablePointer<T>]
    private var capacity: Int
    /// Absolute input index of `buffers[c][0]`.
    private var origin: Int64
    /// Samples held per channel (from `origin`).
    private var count: Int
    /// Input frames received (absolute end), not counting flush padding.
    private(set) var received: Int64 = 0
    /// Output frames made.
    private(set) var produced: Int64 = 0
    /// Position of the next output: `base + phase / up`.
    private var base: Int64, phase: Int
    private var ended = false

    init(ratio: RateRatio, channels: Int, quality: ResampleQuality, lead: Int, trail: Int) {
        self.ratio = ratio
        self.channels = channels
        self.lead = Int64(lead)
        self.trail = Int64(trail)
        let f = ratio.isIdentity ? nil : PolyphaseFilter<T>(ratio: ratio, quality: quality)
        filter = f
        let h = Int64(f?.half ?? 0)
        let step = Int64((ratio.down + ratio.up - 1) / ratio.up)
        hold = ratio.isIdentity ? Int64(trail) : max(h, Int64(trail) + step + 1)
        capacity = 4096 + (f?.taps ?? 0) * 2
        buffers = (0..<channels).map { _ in
            let p = UnsafeMutablePointer<T>.allocate(capacity: 4096 + (f?.taps ?? 0) * 2)
            p.initialize(repeating: 0, count: 4096 + (f?.taps ?? 0) * 2)
            return p
        }
        // History before input 0 is silence.
        origin = -Int64(max(0, (f?.half ?? 1) - 1))
        count = Int(-origin)
        base = Int64(lead)
        phase = 0
    }

    deinit {
        for b in buffers { b.deallocate() }
    }

    /// The total output for the input received, once finished.
    var finalOutputFrames: Int64 { ratio.outputFrames(for: received - lead - trail) }

    /// Makes room for `n` more input frames and returns where each channel's go; then call ``commit(_:)``.
    func reserve(_ n: Int) -> [UnsafeMutablePointer<T>] {
        // Drop history no output needs any more.
        let keepFrom = base - Int64(max(0, (filter?.half ?? 1) - 1))
        let drop = Int(max(0, min(Int64(count), keepFrom - origin)))
        if drop > 0 {
            for b in buffers { b.update(from: b + drop, count: count - drop) }
            origin += Int64(drop)
            count -= drop
        }
        let pad = (filter?.taps ?? 8) + 8
        if count + n + pad > capacity {
            let newCap = max(capacity * 2, count + n + pad)
            for c in 0..<channels {
                let p = UnsafeMutablePointer<T>.allocate(capacity: newCap)
                p.initialize(repeating: 0, count: newCap)
                p.update(from: buffers[c], count: count)
                buffers[c].deallocate()
                buffers[c] = p
            }
            capacity = newCap
        }
        return buffers.map { $0 + count }
    }

    /// Takes the `n` frames written after ``reserve(_:)``.
    func commit(_ n: Int) {
        count += n
        received += Int64(n)
        // Keep the padding that the filter reads past the end at zero.
        let pad = min(capacity - count, (filter?.taps ?? 8) + 8)
        for b in buffers { (b + count).update(repeating: 0, count: pad) }
    }

    /// Marks the end of the input: the last outputs can now be made (from silence after the end).
    func finish() {
        guard !ended else { return }
        ended = true
        // Silence after the end, as far as the last output's filter reaches.
        let pad = (filter?.half ?? 0) + (filter?.taps ?? 0) + 8
        let ptrs = reserve(pad)
        for p in ptrs { p.update(repeating: 0, count: pad) }
        count += pad
    }

    /// Output frames that can be made now.
    var ready: Int {
        let limit: Int64
        if ended {
            limit = max(0, finalOutputFrames - produced)
        } else {
            // Outputs whose base + hold is below what has been received.
            let last = received - 1 - hold   // highest base allowed
            if last < base { return 0 }
            if ratio.isIdentity { return Int(last - base + 1) }
            // base_j = base + floor((phase + k * down) / up) <= last
            let room = (last - base + 1) * Int64(ratio.up) - Int64(phase)   // k * down < room
            limit = room <= 0 ? 0 : (room + Int64(ratio.down) - 1) / Int64(ratio.down)
        }
        return Int(limit)
    }

    /// Makes `n` (at most ``ready``) output frames into `out[c]`.
    func produce(_ n: Int, into out: [UnsafeMutablePointer<T>]) {
        guard n > 0 else { return }
        if ratio.isIdentity {
            let start = Int(base - origin)
            for c in 0..<channels { out[c].update(from: buffers[c] + start, count: n) }
            base += Int64(n)
            produced += Int64(n)
            return
        }
        let f = filter!
        let up = ratio.up, stepInt = Int64(ratio.down / up), stepFrac = ratio.down % up
        let taps = f.taps, h = f.half
        var c = 0
        if !f.interpolated && CPUFeatures.useAVX2 && (T.self == Float.self || T.self == Double.self) {
            let start = Int(base - Int64(h - 1) - origin)
            while c < channels {
                let pair = c + 1 < channels
                if T.self == Float.self {
                    let k = UnsafeRawPointer(f.coefficients).assumingMemoryBound(to: Float.self)
                    func fl(_ p: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<Float> { UnsafeMutableRawPointer(p).assumingMemoryBound(to: Float.self) }
                    if pair {
                        mediakit_simd_resample2_f32(k, taps, up, Int(stepInt), stepFrac, fl(buffers[c]), fl(buffers[c + 1]), start, phase, n, fl(out[c]), fl(out[c + 1]))
                    } else {
                        mediakit_simd_resample_f32(k, taps, up, Int(stepInt), stepFrac, fl(buffers[c]), start, phase, n, fl(out[c]))
                    }
                } else {
                    let k = UnsafeRawPointer(f.coefficients).assumingMemoryBound(to: Double.self)
                    func db(_ p: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<Double> { UnsafeMutableRawPointer(p).assumingMemoryBound(to: Double.self) }
                    if pair {
                        mediakit_simd_resample2_f64(k, taps, up, Int(stepInt), stepFrac, db(buffers[c]), db(buffers[c + 1]), start, phase, n, db(out[c]), db(out[c + 1]))
                    } else {
                        mediakit_simd_resample_f64(k, taps, up, Int(stepInt), stepFrac, db(buffers[c]), start, phase, n, db(out[c]))
                    }
                }
                c += pair ? 2 : 1
            }
        }
        if !f.interpolated {
            // Channels in pairs: each coefficient row is loaded once for two channels.
            while c + 1 < channels {
                let x0 = buffers[c], x1 = buffers[c + 1]
                var b = Int(base - Int64(h - 1) - origin)
                var p = phase
                let o0 = out[c], o1 = out[c + 1]
                let stepI = Int(stepInt)
                for i in 0..<n {
                    (o0[i], o1[i]) = T.dot2(f.coefficients + p * taps, x0 + b, x1 + b, taps)
                    b += stepI
                    p += stepFrac
                    if p >= up { p -= up; b += 1 }
                }
                c += 2
            }
        }
        while c < channels {
            defer { c += 1 }
            let x = buffers[c]
            var b = base - Int64(h - 1) - origin   // index in x of the first input the filter reads
            var p = phase
            let o = out[c]
            if !f.interpolated {
                for i in 0..<n {
                    o[i] = T.dot(f.coefficients + p * taps, x + Int(b), taps)
                    b += stepInt
                    p += stepFrac
                    if p >= up { p -= up; b += 1 }
                }
            } else {
                let phases = Int64(f.phases), upL = Int64(up)
                for i in 0..<n {
                    let q = Int64(p) * phases
                    let row = Int(q / upL)
                    let frac = T(double: Double(q % upL) / Double(upL))
                    let a = T.dot(f.coefficients + row * taps, x + Int(b), taps)
                    let z = T.dot(f.coefficients + (row + 1) * taps, x + Int(b), taps)
                    o[i] = a + (z - a) * frac
                    b += stepInt
                    p += stepFrac
                    if p >= up { p -= up; b += 1 }
                }
            }
        }
        // Advance the shared position.
        let total = Int64(phase) + Int64(n) * Int64(ratio.down)
        base += total / Int64(up)
        phase = Int(total % Int64(up))
        produced += Int64(n)
    }
}
