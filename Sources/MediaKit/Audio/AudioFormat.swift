import Foundation

/// The old name of ``SampleFormat``'s sample types (`u8`, `s16`, `s24`, `s32`, `f32`, `f64`).
@available(*, deprecated, renamed: "SampleFormat")
public typealias AudioSampleType = SampleFormat

/// A loudspeaker position, numbered as the bits of the WAVE channel mask
/// (`WAVEFORMATEXTENSIBLE.dwChannelMask`) and FFmpeg's `AV_CHAN_*`.
public enum ChannelPosition: Int, Sendable, CaseIterable {
    /// Front left.
    case frontLeft = 0
    /// Front right.
    case frontRight
    /// Front centre.
    case frontCenter
    /// Low-frequency effects.
    case lowFrequency
    /// Back (rear) left.
    case backLeft
    /// Back (rear) right.
    case backRight
    /// Front left of centre.
    case frontLeftOfCenter
    /// Front right of centre.
    case frontRightOfCenter
    /// Back centre.
    case backCenter
    /// Side left.
    case sideLeft
    /// Side right.
    case sideRight
    /// Top centre.
    case topCenter
    /// Top front left.
    case topFrontLeft
    /// Top front centre.
    case topFrontCenter
    /// Top front right.
    case topFrontRight
    /// Top back left.
    case topBackLeft
    /// Top back centre.
    case topBackCenter
    /// Top back right.
    case topBackRight

    /// The bit of this position in a WAVE channel mask.
    public var maskBit: UInt64 { 1 << UInt64(rawValue) }

    /// FFmpeg's abbreviation ("FL", "LFE" ...).
    public var name: String {
        ["FL", "FR", "FC", "LFE", "BL", "BR", "FLC", "FRC", "BC", "SL", "SR", "TC", "TFL", "TFC", "TFR", "TBL", "TBC", "TBR"][rawValue]
    }
}

/// The loudspeaker of each channel, in the order the channels are stored.
///
/// Named layouts follow FFmpeg's names and channel order (the WAVE / MP4 order, by mask bit):
/// `"5.1"` is FL FR FC LFE BL BR and `"5.1(side)"` is FL FR FC LFE SL SR, as in `ffmpeg -channel_layout`.
/// Other orders: ``vorbis(channels:)`` (Vorbis and Opus mapping family 1) and ``aac(configuration:)``
/// (the channel order of an AAC channel configuration).
public struct ChannelLayout: Sendable, Hashable, CustomStringConvertible {
    /// The position of each channel, in storage order.
    public var positions: [ChannelPosition]

    /// A layout from positions in storage order (each position at most once).
    public init(_ positions: [ChannelPosition]) { self.positions = positions }

    /// Channel count.
    public var count: Int { positions.count }

    /// The WAVE channel mask of the positions (0 when a position repeats).
    public var mask: UInt64 {
        let m = positions.reduce(UInt64(0)) { $0 | $1.maskBit }
        return m.nonzeroBitCount == positions.count ? m : 0
    }

    /// True when the channels are stored in mask-bit order (the order WAVE files and MP4's
    /// `chan` box imply, and FFmpeg's native order).
    public var isMaskOrder: Bool { zip(positions, positions.dropFirst()).allSatisfy { $0.rawValue < $1.rawValue } }

    /// The layout of a WAVE channel mask, in mask-bit order; nil for a zero mask or bits above
    /// the 18 named positions.
    public init?(mask: UInt64) {
        guard mask != 0, mask >> 18 == 0 else { return nil }
        positions = ChannelPosition.allCases.filter { mask & $0.maskBit != 0 }
    }

    /// The named layouts, as FFmpeg names them, in FFmpeg's order.
    public static let named: [(name: String, layout: ChannelLayout)] = [
        ("mono", ChannelLayout([.frontCenter])),
        ("stereo", ChannelLayout([.frontLeft, .frontRight])),
        ("2.1", ChannelLayout([.frontLeft, .frontRight, .lowFrequency])),
        ("3.0", ChannelLayout([.frontLeft, .frontRight, .frontCenter])),
        ("3.0(back)", ChannelLayout([.frontLeft, .frontRight, .backCenter])),
        ("4.0", ChannelLayout([.frontLeft, .frontRight, .frontCenter, .backCenter])),
        ("quad", ChannelLayout([.frontLeft, .frontRight, .backLeft, .backRight])),
        ("quad(side)", ChannelLayout([.frontLeft, .frontRight, .sideLeft, .sideRight])),
        ("3.1", ChannelLayout([.frontLeft, .frontRight, .frontCenter, .lowFrequency])),
        ("5.0", ChannelLayout([.frontLeft, .frontRight, .frontCenter, .backLeft, .backRight])),
        ("5.0(side)", ChannelLayout([.frontLeft, .frontRight, .frontCenter, .sideLeft, .sideRight])),
        ("4.1", ChannelLayout([.frontLeft, .frontRight, .frontCenter, .lowFrequency, .backCenter])),
        ("5.1", ChannelLayout([.frontLeft, .frontRight, .frontCenter, .lowFrequency, .backLeft, .backRight])),
        ("5.1(side)", ChannelLayout([.frontLeft, .frontRight, .frontCenter, .lowFrequency, .sideLeft, .sideRight])),
        ("6.0", ChannelLayout([.frontLeft, .frontRight, .frontCenter, .backCenter, .sideLeft, .sideRight])),
        ("6.1", ChannelLayout([.frontLeft, .frontRight, .frontCenter, .lowFrequency, .backCenter, .sideLeft, .sideRight])),
        ("7.0", ChannelLayout([.frontLeft, .frontRight, .frontCenter, .backLeft, .backRight, .sideLeft, .sideRight])),
        ("7.1", ChannelLayout([.frontLeft, .frontRight, .frontCenter, .lowFrequency, .backLeft, .backRight, .sideLeft, .sideRight])),
        ("7.1(wide)", ChannelLayout([.frontLeft, .frontRight, .frontCenter, .lowFrequency, .backLeft, .backRight,
                                     .frontLeftOfCenter, .frontRightOfCenter])),
    ]

    /// Mono: FC.
    public static let mono = ChannelLayout([.frontCenter])
    /// Stereo: FL FR.
    public static let stereo = ChannelLayout([.frontLeft, .frontRight])
    /// 5.1: FL FR FC LFE BL BR (FFmpeg's "5.1").
    public static let surround51 = ChannelLayout([.frontLeft, .frontRight, .frontCenter, .lowFrequency, .backLeft, .backRight])
    /// 7.1: FL FR FC LFE BL BR SL SR.
    public static let surround71 = ChannelLayout([.frontLeft, .frontRight, .frontCenter, .lowFrequency, .backLeft, .backRight, .sideLeft, .sideRight])

    /// A layout by name: a name of ``named`` ("mono", "stereo", "2.1", "quad", "5.0", "5.1", "7.1" ...),
    /// "Nc" / "N" for the default layout of N channels (``default(channels:)``), or positions
    /// joined by "+" ("FL+FR+LFE"), kept in the order given.
    /// - Throws: ``MediaError`` `.invalidArgument` naming the unknown layout or position.
    public init(name: String) throws {
        let n = name.trimmingCharacters(in: .whitespaces)
        if let hit = Self.named.first(where: { $0.name == n.lowercased() }) {
            self = hit.layout
            return
        }
        let digits = n.hasSuffix("c") ? String(n.dropLast()) : n
        if let count = Int(digits), !digits.isEmpty {
            guard let l = Self.default(channels: count) else {
                throw MediaError(.invalidArgument, "no default channel layout for \(count) channels (1 to 8 have one; name the positions, e.g. FL+FR+FC)")
            }
            self = l
            return
        }
        var list: [ChannelPosition] = []
        for part in n.split(separator: "+", omittingEmptySubsequences: false) {
            guard let p = ChannelPosition.allCases.first(where: { $0.name == part.uppercased() }) else {
                let known = Self.named.map(\.name).joined(separator: ", ")
                throw MediaError(.invalidArgument, "unknown channel layout \"\(name)\": give one of \(known), a channel count, or positions such as FL+FR+LFE")
            }
            guard !list.contains(p) else {
                throw MediaError(.invalidArgument, "channel layout \"\(name)\" names \(p.name) twice")
            }
            list.append(p)
        }
        self.init(list)
    }

    /// FFmpeg's default layout for a channel count (`av_channel_layout_default`): mono, stereo,
    /// 3.0, 4.0, 5.0, 5.1, 6.1, 7.1; nil for other counts.
    public static func `default`(channels: Int) -> ChannelLayout? {
        let names = [1: "mono", 2: "stereo", 3: "3.0", 4: "4.0", 5: "5.0", 6: "5.1", 7: "6.1", 8: "7.1"]
        guard let name = names[channels] else { return nil }
        return named.first { $0.name == name }!.layout
    }

    /// The channel order of Vorbis (and Opus channel mapping family 1) for 1 to 8 channels:
    /// mono; L R; L C R; FL FR BL BR; FL C FR BL BR; FL C FR BL BR LFE;
    /// FL C FR SL SR BC LFE; FL C FR SL SR BL BR LFE (Vorbis I specification, section 4.3.9).
    public static func vorbis(channels: Int) -> ChannelLayout? {
        let orders: [[ChannelPosition]] = [
            [.frontCenter],
            [.frontLeft, .frontRight],
            [.frontLeft, .frontCenter, .frontRight],
            [.frontLeft, .frontRight, .backLeft, .backRight],
            [.frontLeft, .frontCenter, .frontRight, .backLeft, .backRight],
            [.frontLeft, .frontCenter, .frontRight, .backLeft, .backRight, .lowFrequency],
            [.frontLeft, .frontCenter, .frontRight, .sideLeft, .sideRight, .backCenter, .lowFrequency],
            [.frontLeft, .frontCenter, .frontRight, .sideLeft, .sideRight, .backLeft, .backRight, .lowFrequency],
        ]
        return (1...8).contains(channels) ? ChannelLayout(orders[channels - 1]) : nil
    }

    /// The channel order of an AAC channel configuration 1 to 7 (ISO/IEC 14496-3 table 1.19, as
    /// the positions FFmpeg gives them): C; L R; C L R; C L R Cs; C L R Ls Rs; C L R Ls Rs LFE;
    /// C Lc Rc L R Ls Rs LFE.
    public static func aac(configuration: Int) -> ChannelLayout? {
        let orders: [[ChannelPosition]] = [
            [.frontCenter],
            [.frontLeft, .frontRight],
            [.frontCenter, .frontLeft, .frontRight],
            [.frontCenter, .frontLeft, .frontRight, .backCenter],
            [.frontCenter, .frontLeft, .frontRight, .backLeft, .backRight],
            [.frontCenter, .frontLeft, .frontRight, .backLeft, .backRight, .lowFrequency],
            [.frontCenter, .frontLeftOfCenter, .frontRightOfCenter, .frontLeft, .frontRight, .backLeft, .backRight, .lowFrequency],
        ]
        return (1...7).contains(configuration) ? ChannelLayout(orders[configuration - 1]) : nil
    }

    /// FFmpeg's name for the layout when it has one ("5.1"), else the positions joined by "+".
    public var description: String {
        Self.named.first(where: { $0.layout == self })?.name ?? positions.map(\.name).joined(separator: "+")
    }
}

/// A PCM format: sample type, layout in memory, rate and channels.
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    /// The sample type, always its interleaved form (``SampleFormat/s16``, never
    /// ``SampleFormat/s16Planar``): the layout is ``isPlanar``. A planar format set here becomes
    /// its interleaved form and sets ``isPlanar``.
    public var sampleType: SampleFormat {
        didSet {
            if sampleType.isPlanar {
                sampleType = sampleType.interleaved
                isPlanar = true
            }
        }
    }
    /// True for one plane per channel, false for interleaved frames. Default: false.
    public var isPlanar: Bool

    /// The sample format with the layout: ``sampleType`` in its planar form when ``isPlanar``
    /// (the `MK_SAMPLES_*` code of the C API is its raw value).
    public var sampleFormat: SampleFormat { isPlanar ? sampleType.planar : sampleType }
    /// Sample frames per second.
    public var sampleRate: Int
    /// The channels and their order.
    public var layout: ChannelLayout

    /// A format; nothing is checked until a converter is made from it (``validate()``).
    /// A planar `sampleType` (``SampleFormat/f32Planar``) makes the format planar whatever `planar` says.
    public init(_ sampleType: SampleFormat, planar: Bool = false, sampleRate: Int, layout: ChannelLayout) {
        self.sampleType = sampleType.interleaved
        self.isPlanar = planar || sampleType.isPlanar
        self.sampleRate = sampleRate
        self.layout = layout
    }

    /// A format with FFmpeg's default layout for `channels` (see ``ChannelLayout/default(channels:)``);
    /// counts without a default get front-left, front-right ... positions in mask order.
    public init(_ sampleType: SampleFormat, planar: Bool = false, sampleRate: Int, channels: Int) {
        let layout = ChannelLayout.default(channels: channels)
            ?? ChannelLayout(Array(ChannelPosition.allCases.prefix(max(0, min(channels, ChannelPosition.allCases.count)))))
        self.init(sampleType, planar: planar, sampleRate: sampleRate, layout: layout)
    }

    /// The format of a decoded audio frame (its channel mask when it has one, else the default layout).
    public init(of frame: Frame) {
        let type = (frame.sampleFormat ?? .s16).interleaved
        let planar = frame.sampleFormat?.isPlanar ?? false
        if let l = ChannelLayout(mask: frame.channelMask), l.count == frame.channels {
            self.init(type, planar: planar, sampleRate: frame.sampleRate, layout: l)
        } else {
            self.init(type, planar: planar, sampleRate: frame.sampleRate, channels: frame.channels)
        }
    }

    /// Channel count.
    public var channels: Int { layout.count }
    /// Planes of a buffer in this format: one per channel when planar, else one.
    public var planeCount: Int { isPlanar ? channels : 1 }
    /// Bytes of one sample frame in one plane.
    public var bytesPerFrame: Int { sampleType.bytesPerSample * (isPlanar ? 1 : channels) }

    /// Limits on a format: channels, rate.
    public static let maxChannels = 64
    /// The highest sample rate accepted (8 times 768 kHz).
    public static let maxSampleRate = 6_144_000

    /// Throws when the format cannot be converted: no channels, too many, a rate that is not
    /// positive or above ``maxSampleRate``.
    /// - Parameter role: "source" or "destination", for the message.
    public func validate(role: String = "audio") throws {
        guard sampleRate > 0 else {
            throw MediaError(.invalidArgument, "the \(role) format has sample rate \(sampleRate); it must be positive")
        }
        guard sampleRate <= Self.maxSampleRate else {
            throw MediaError(.limit, "the \(role) sample rate \(sampleRate) is above the \(Self.maxSampleRate) Hz limit")
        }
        guard channels > 0 else {
            throw MediaError(.invalidArgument, "the \(role) format has no channels")
        }
        guard channels <= Self.maxChannels else {
            throw MediaError(.limit, "the \(role) format has \(channels) channels; at most \(Self.maxChannels) are supported")
        }
    }

    /// For example "f32 interleaved 48000 Hz stereo".
    public var description: String {
        "\(sampleType.typeName) \(isPlanar ? "planar" : "interleaved") \(sampleRate) Hz \(layout)"
    }
}

/// PCM samples in one ``AudioFormat``: one byte array for interleaved frames, one per channel
/// when planar.
public struct AudioBuffer: Sendable {
    /// The format of the samples.
    public var format: AudioFormat
    /// Sample frames held.
    public var frames: Int
    /// The bytes: ``AudioFormat/planeCount`` arrays of `frames * bytesPerFrame` bytes each.
    public var planes: [[UInt8]]

    /// A buffer over existing bytes.
    /// - Throws: ``MediaError`` `.invalidArgument` when the plane count or a plane's size
    ///   does not match `format` and `frames`.
    public init(format: AudioFormat, frames: Int, planes: [[UInt8]]) throws {
        guard frames >= 0, planes.count == format.planeCount else {
            throw MediaError(.invalidArgument, "a \(format) buffer needs \(format.planeCount) plane(s), \(planes.count) given")
        }
        let bytes = frames * format.bytesPerFrame
        if let bad = planes.firstIndex(where: { $0.count < bytes }) {
            throw MediaError(.invalidArgument, "plane \(bad) holds \(planes[bad].count) bytes; \(frames) frames of \(format) need \(bytes)")
        }
        self.format = format
        self.frames = frames
        self.planes = planes
    }

    /// An empty (zero-frame) buffer.
    public init(empty format: AudioFormat) {
        self.format = format
        frames = 0
        planes = Array(repeating: [], count: format.planeCount)
    }

    /// Interleaved bytes (the planes interleaved when the buffer is planar).
    public var interleavedBytes: [UInt8] {
        if !format.isPlanar { return planes[0] }
        let b = format.sampleType.bytesPerSample, ch = format.channels
        var out = [UInt8](repeating: 0, count: frames * b * ch)
        for c in 0..<ch {
            for i in 0..<frames {
                for k in 0..<b { out[(i * ch + c) * b + k] = planes[c][i * b + k] }
            }
        }
        return out
    }
}
