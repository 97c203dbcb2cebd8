import Foundation

/// Writes interleaved PCM, raw (headerless) or as a WAV file.
public final class PCMWriter {
    /// The sample type written.
    public let sampleType: AudioSampleType
    /// Samples per second.
    public let sampleRate: Int
    /// Channels per sample frame.
    public let channels: Int
    /// True for a WAV file (RIFF header), false for raw PCM.
    public let wav: Bool
    private let channelMask: UInt64
    private let file: OutputFile
    private var scratch: [UInt8] = []
    /// Sample frames written so far.
    public private(set) var sampleFrames: Int64 = 0

    /// Starts writing `path` (through a temporary file, see ``OutputFile``).
    public convenience init(path: String, format: PCMFormat, sampleRate: Int, channels: Int, channelMask: UInt64 = 0, wav: Bool) throws {
        try self.init(path: path, sampleType: format.sampleType, sampleRate: sampleRate, channels: channels, channelMask: channelMask, wav: wav)
    }

    /// Starts writing `path` (through a temporary file, see ``OutputFile``) in any sample type.
    /// `channelMask` goes into a WAV header (0: the default mask for the channel count).
    public init(path: String, sampleType: AudioSampleType, sampleRate: Int, channels: Int, channelMask: UInt64 = 0, wav: Bool) throws {
        self.sampleType = sampleType
        self.sampleRate = sampleRate
        self.channels = channels
        self.wav = wav
        self.channelMask = channelMask
        file = try OutputFile(path: path)
        if wav { try file.write(Self.wavHeader(type: sampleType, rate: sampleRate, channels: channels, mask: channelMask, dataBytes: 0)) }
    }

    /// Appends samples `[from, from+count)` of an audio frame.
    public func write(_ frame: Frame, from: Int = 0, count: Int? = nil) throws {
        if frame.channels != channels || frame.sampleRate != sampleRate {
            throw MediaError(.unsupported, "the audio changed from \(sampleRate) Hz \(channels) ch to \(frame.sampleRate) Hz \(frame.channels) ch mid-stream; raw PCM output cannot hold both")
        }
        scratch.removeAll(keepingCapacity: true)
        AudioSampleConverter.append(frame, from: from, count: count, as: sampleType, to: &scratch)
        sampleFrames += Int64(scratch.count / (channels * sampleType.bytesPerSample))
        try file.write(scratch)
    }

    /// Appends converted samples (interleaved, of this writer's type, rate and channel count).
    public func write(_ buffer: AudioBuffer) throws {
        let f = buffer.format
        guard f.sampleType == sampleType, f.channels == channels, f.sampleRate == sampleRate else {
            throw MediaError(.invalidArgument, "a buffer of \(f) was given to a writer of \(sampleType.rawValue) \(sampleRate) Hz \(channels) ch")
        }
        guard buffer.frames > 0 else { return }
        sampleFrames += Int64(buffer.frames)
        let bytes = buffer.interleavedBytes
        try file.write(bytes.count == buffer.frames * f.channels * sampleType.bytesPerSample ? bytes : Array(bytes.prefix(buffer.frames * f.channels * sampleType.bytesPerSample)))
    }

    /// Completes the header and moves the file into place.
    public func finish() throws {
        if wav {
            let data = sampleFrames * Int64(channels * sampleType.bytesPerSample)
            guard data <= Int64(UInt32.max) - 80 else {
                file.discard()
                throw MediaError(.limit, "\(data) bytes of audio do not fit in a WAV file (4 GiB); write raw PCM instead", path: file.path)
            }
            try file.patch(Self.wavHeader(type: sampleType, rate: sampleRate, channels: channels, mask: channelMask, dataBytes: UInt32(data)), at: 0)
        }
        try file.commit()
    }

    /// Removes what was written.
    public func cancel() { file.discard() }

    /// A RIFF/WAVE header: format tag 1 (integer PCM) or 3 (IEEE float); WAVE_FORMAT_EXTENSIBLE
    /// with the channel mask for more than two channels and for integer samples wider than 16 bits.
    static func wavHeader(type: AudioSampleType, rate: Int, channels: Int, mask: UInt64, dataBytes: UInt32) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
        func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)] }
        let bits = type.bytesPerSample * 8
        let block = channels * type.bytesPerSample
        let extensible = channels > 2 || (!type.isFloat && bits > 16)
        let tag = type.isFloat ? 3 : 1
        var fmt = le16(extensible ? 0xFFFE : tag) + le16(channels) + le32(UInt32(rate)) + le32(UInt32(rate * block)) + le16(block) + le16(bits)
        if extensible {
            let defaultMask: UInt32 = [0, 0x4, 0x3, 0x7, 0x33, 0x37, 0x3F, 0x13F, 0x63F][min(channels, 8)]
            fmt += le16(22) + le16(bits) + le32(mask != 0 ? UInt32(truncatingIfNeeded: mask) : defaultMask)
            // KSDATAFORMAT_SUBTYPE_PCM / IEEE_FLOAT GUID
            fmt += le16(tag) + [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
        }
        var h = Array("RIFF".utf8) + le32(UInt32(4 + 8 + fmt.count + 8) &+ dataBytes) + Array("WAVE".utf8)
        h += Array("fmt ".utf8) + le32(UInt32(fmt.count)) + fmt
        h += Array("data".utf8) + le32(dataBytes)
        return h
    }
}

/// Writes decoded pictures as raw NV12 / I420, or as a YUV4MPEG2 (Y4M) stream.
///
/// Pictures are packed and written on a writer thread, so file I/O overlaps decoding;
/// at most three pictures wait at a time (the frames keep the decoder's memory alive
/// until they are written). Planes that are already tightly packed go to the file
/// straight from the decoder's memory.
public final class PictureWriter: @unchecked Sendable {
    /// The packed layout written.
    public let format: RawPictureFormat
    /// True for Y4M (always I420 inside), false for headerless raw frames.
    public let y4m: Bool
    /// How every picture is turned before it is written (``PictureOrientation/upright``: not at all).
    public let orientation: PictureOrientation
    private let file: OutputFile
    /// Frames per second written into the Y4M header.
    public let frameRate: Rational
    private var headerWritten = false
    /// Pictures handed to ``write(_:)`` so far.
    public private(set) var frames = 0
    /// Width and height of the first picture as written (every later one must match).
    public private(set) var size: (width: Int, height: Int)?

    private let queue = DispatchQueue(label: "mediakit.picture-writer")
    private let slots = DispatchSemaphore(value: 3)
    private let lock = NSLock()
    private var failure: Error?
    private var scratch: [UInt8] = []   // used on `queue` only
    private let registry: MediaRegistry
    private var converter: PictureConverter?
    private var converterRange = 0

    /// Starts writing `path`. `frameRate` goes into the Y4M header; each picture is
    /// turned by `orientation` (a track's ``Track/orientation`` turns it as ffmpeg's
    /// autorotation does), then, when its pixel format does not pack to `format` by copying samples (10-bit or
    /// 4:4:4 pictures into NV12 ...), converted by a picture converter from `registry`
    /// (the FFmpeg plugin's libswscale, as `ffmpeg -pix_fmt` converts).
    public init(path: String, format: RawPictureFormat, y4m: Bool, frameRate: Rational = Rational(25, 1), orientation: PictureOrientation = .upright,
                registry: MediaRegistry = .shared) throws {
        self.orientation = orientation
        self.registry = registry
        self.format = y4m ? .i420 : format
        self.y4m = y4m
        self.frameRate = frameRate
        file = try OutputFile(path: path)
    }

    /// Queues one picture for writing. An error from an earlier picture is thrown here
    /// or by ``finish()``.
    public func write(_ frame: Frame) throws {
        if let e = lock.withLock({ failure }) { throw e }
        let turned = orientation.transposed
        let (w, h) = turned ? (frame.height, frame.width) : (frame.width, frame.height)
        if let size, size != (w, h) {
            throw MediaError(.unsupported, "the picture size changed from \(size.width)x\(size.height) to \(w)x\(h) mid-stream; raw video cannot hold both")
        }
        guard let source = frame.pixelFormat else {
            throw MediaError(.invalidArgument, "an audio frame was given to the picture writer")
        }
        // FFmpeg turns pictures before converting them, except where its transpose filter cannot
        // take the format (a quarter turn of 4:2:2): then the conversion to the output format
        // comes first. The converter works at the size it sees.
        let convertFirst = turned && source.chromaShift.x != source.chromaShift.y
        let (cw, ch) = convertFirst ? (frame.width, frame.height) : (w, h)
        if !PicturePacker.needsConversion(frame, as: format) {
            converter = nil
        } else if converter == nil || converter!.source != source || (converter!.width, converter!.height) != (cw, ch)
                    || converterRange != frame.colorRange {
            converter = try registry.makePictureConverter(from: source, to: format.pixelFormat, width: cw, height: ch,
                                                          colorRange: frame.colorRange, colorSpace: frame.colorSpace)
            converterRange = frame.colorRange
        }
        let converter = self.converter
        var headerBytes: [UInt8] = []
        if y4m && !headerWritten {
            // As FFmpeg's yuv4mpegpipe writes it: chroma siting from the decoder, SAR 0:0 when unknown.
            // The range of the pictures as written: converted pictures are limited range (as
            // ffmpeg marks them, also when the source's range was unspecified).
            let full = frame.colorRange == 2 || frame.pixelFormat == .yuvj420p
            let written = converter == nil ? (full ? 2 : frame.colorRange) : 1
            let range = written == 2 ? " XCOLORRANGE=FULL" : written == 1 ? " XCOLORRANGE=LIMITED" : ""
            let siting = frame.chromaLocation == 3 ? "C420paldv XYSCSS=420PALDV" : frame.chromaLocation == 1 ? "C420mpeg2 XYSCSS=420MPEG2" : "C420jpeg XYSCSS=420JPEG"
            var sar = frame.sampleAspectRatio
            if turned && sar.numerator > 0 { sar = Rational(sar.denominator, sar.numerator) }
            headerBytes = Array("YUV4MPEG2 W\(w) H\(h) F\(frameRate.numerator):\(frameRate.denominator) Ip A\(sar.numerator):\(sar.numerator == 0 ? 0 : sar.denominator) \(siting)\(range)\n".utf8)
            headerWritten = true
        }
        size = (w, h)
        frames += 1
        let header = headerBytes
        slots.wait()
        queue.async { [self] in
            defer { slots.signal() }
            guard lock.withLock({ failure == nil }) else { return }
            do {
                if !header.isEmpty { try file.write(header) }
                var picture = frame
                if convertFirst, let converter { picture = try converter.convert(picture) }
                picture = try PicturePacker.oriented(picture, orientation)
                if !convertFirst, let converter { picture = try converter.convert(picture) }
                try writeNow(picture)
            } catch {
                lock.withLock { failure = error }
            }
        }
    }

    private static let frameMarker = Array("FRAME\n".utf8)

    /// Packs and writes one picture, already turned and converted (on the writer thread).
    private func writeNow(_ frame: Frame) throws {
        let w = frame.width, h = frame.height
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        // Pictures already in the written layout (a converter's NV12, 10-bit 4:2:0) whose rows
        // are not padded: every plane is written from the frame's memory.
        let planeBytes = frame.planes.indices.map { frame.planeSize($0).width * format.bytesPerSample }
        if frame.pixelFormat == format.pixelFormat, frame.planes.indices.allSatisfy({ frame.planes[$0].stride == planeBytes[$0] }) {
            try withExtendedLifetime(frame.storage) {
                try Self.frameMarker.withUnsafeBytes { marker in
                    var pieces: [UnsafeRawBufferPointer] = y4m ? [marker] : []
                    for (i, p) in frame.planes.enumerated() {
                        pieces.append(UnsafeRawBufferPointer(start: p.base, count: planeBytes[i] * frame.planeSize(i).height))
                    }
                    try file.write(pieces: pieces)
                }
            }
            return
        }
        // Fast path: planar 4:2:0 with tightly packed planes: the luma
        // (and, for I420, the chroma) planes are written from the frame's memory.
        if format != .yuv420p10le, frame.pixelFormat != .nv12, frame.planes[0].stride == w,
           format == .nv12 || (frame.planes[1].stride == cw && frame.planes[2].stride == cw) {
            try withExtendedLifetime(frame.storage) {
                try Self.frameMarker.withUnsafeBytes { marker in
                    var pieces: [UnsafeRawBufferPointer] = y4m ? [marker] : []
                    pieces.append(UnsafeRawBufferPointer(start: frame.planes[0].base, count: w * h))
                    if format == .i420 {
                        pieces.append(UnsafeRawBufferPointer(start: frame.planes[1].base, count: cw * ch))
                        pieces.append(UnsafeRawBufferPointer(start: frame.planes[2].base, count: cw * ch))
                        return try file.write(pieces: pieces)
                    }
                    if scratch.count != 2 * cw * ch { scratch = [UInt8](repeating: 0, count: 2 * cw * ch) }
                    scratch.withUnsafeMutableBufferPointer { d in
                        for y in 0..<ch {
                            let u = frame.planes[1].base.assumingMemoryBound(to: UInt8.self) + y * frame.planes[1].stride
                            let v = frame.planes[2].base.assumingMemoryBound(to: UInt8.self) + y * frame.planes[2].stride
                            let row = d.baseAddress! + y * 2 * cw
                            for x in 0..<cw { row[2 * x] = u[x]; row[2 * x + 1] = v[x] }
                        }
                    }
                    try scratch.withUnsafeBytes { uv in
                        pieces.append(uv)
                        try file.write(pieces: pieces)
                    }
                }
            }
            return
        }
        try PicturePacker.pack(frame, as: format, into: &scratch)
        if y4m { try file.write(Self.frameMarker) }
        try file.write(scratch)
    }

    /// Waits for queued pictures, then moves the file into place.
    public func finish() throws {
        queue.sync {}
        if let e = lock.withLock({ failure }) {
            file.discard()
            throw e
        }
        try file.commit()
    }

    /// Waits for queued pictures, then removes what was written.
    public func cancel() {
        queue.sync {}
        file.discard()
    }
}
