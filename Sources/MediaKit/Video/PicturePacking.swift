/// Packed raw-video layouts that decoded pictures can be written as.
public enum RawPictureFormat: String, Sendable, CaseIterable {
    /// 8-bit Y plane, then interleaved U/V at half resolution (the iOS decode sample's layout).
    case nv12
    /// 8-bit Y, U, V planes, chroma at half resolution (FFmpeg's yuv420p).
    case i420
    /// 10-bit Y, U, V planes, chroma at half resolution, each sample in the low bits of a
    /// little-endian 16-bit word (FFmpeg's yuv420p10le). Only 10-bit 4:2:0 sources pack to it.
    case yuv420p10le

    /// The pixel format whose pictures pack to this layout by copying samples
    /// (what a ``PictureConverter`` is asked for when the decoded pictures are another one).
    public var pixelFormat: PixelFormat {
        switch self {
        case .nv12: return .nv12
        case .i420: return .yuv420p
        case .yuv420p10le: return .yuv420p10
        }
    }

    /// Bytes per sample of the layout (1, or 2 for ``yuv420p10le``).
    public var bytesPerSample: Int { self == .yuv420p10le ? 2 : 1 }

    /// Bytes of one packed picture of `width` x `height`.
    public func frameSize(width: Int, height: Int) -> Int {
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        return (width * height + 2 * cw * ch) * bytesPerSample
    }
}

/// Packs decoded pictures into tightly packed NV12 or I420 rows (no stride padding),
/// byte-identical to `ffmpeg -f rawvideo -pix_fmt nv12|yuv420p` for 8-bit 4:2:0 sources
/// (other pictures go through a ``PictureConverter`` first: see ``needsConversion(_:as:)``).
public enum PicturePacker {
    /// Pixel formats that pack without any resampling or change of value (copying or
    /// interleaving samples; whether FFmpeg would change the range is ``needsConversion(_:as:)``'s question).
    public static func canPackExactly(_ f: PixelFormat) -> Bool {
        f == .yuv420p || f == .yuvj420p || f == .nv12
    }

    /// Pixel formats that pack to `layout` without any resampling or change of value:
    /// 8-bit 4:2:0 for NV12 / I420, 10-bit planar 4:2:0 for yuv420p10le.
    public static func canPack(_ f: PixelFormat, as layout: RawPictureFormat) -> Bool {
        layout == .yuv420p10le ? f == .yuv420p10 : canPackExactly(f)
    }

    /// True when `frame` must go through a ``PictureConverter`` before it is packed as
    /// `layout`, to give the bytes `ffmpeg -pix_fmt` gives. FFmpeg converts whenever the
    /// decoded format differs from the output format, and its converter (libswscale) then
    /// also brings full-range pictures to the limited range of the YUV output; a picture
    /// already in the output format is copied whatever its range. So: no conversion for the
    /// same format, nor for NV12 <-> yuv420p interleaving of limited-range pictures; a
    /// conversion for everything else (10-bit, 4:4:4, 4:2:2, full range as yuvj420p or as
    /// yuv420p flagged full range).
    public static func needsConversion(_ frame: Frame, as layout: RawPictureFormat) -> Bool {
        guard let f = frame.pixelFormat else { return false }
        if f == layout.pixelFormat { return false }
        if f == .yuvj420p || frame.colorRange == 2 { return true }
        return !canPack(f, as: layout)
    }

    /// Packs `frame` into `output` (resized to the picture size), turned by `orientation`
    /// first (see ``oriented(_:_:)``).
    /// - Throws: `.unsupported` for a source format that cannot be packed without a
    ///   lossy conversion, or turned.
    public static func pack(_ frame: Frame, as format: RawPictureFormat, orientation: PictureOrientation, into output: inout [UInt8]) throws {
        try pack(oriented(frame, orientation), as: format, into: &output)
    }

    /// Returns `frame` turned clockwise by `clockwise` degrees (90, 180 or 270; 0 returns
    /// it as it is); see ``oriented(_:_:)``.
    /// - Throws: as ``oriented(_:_:)``, and `.invalidArgument` for another angle.
    public static func rotated(_ frame: Frame, clockwise: Int) throws -> Frame {
        guard let orientation = PictureOrientation(clockwise: clockwise) else {
            throw MediaError(.invalidArgument, "pictures turn by 90, 180 or 270 degrees, not \(clockwise)")
        }
        return try oriented(frame, orientation)
    }

    /// Returns `frame` turned by `orientation` (``PictureOrientation/upright`` returns it as
    /// it is) in new memory, in the same pixel format: FFmpeg's `transpose` / `hflip` /
    /// `vflip`, which the ffmpeg tool applies before any format conversion. Every planar
    /// format, NV12 / P010 (a chroma pair moves as one sample) and gray can be turned; a
    /// transpose needs the same chroma subsampling both ways (4:2:0, 4:4:4).
    /// - Throws: `.unsupported` for a transpose of 4:2:2 pictures, `.invalidArgument`
    ///   for an audio frame.
    public static func oriented(_ frame: Frame, _ orientation: PictureOrientation) throws -> Frame {
        guard !orientation.isUpright else { return frame }
        guard let format = frame.pixelFormat else { throw MediaError(.invalidArgument, "not a video frame") }
        let quarter = orientation.transposed
        let (flipX, flipY) = (orientation.flippedHorizontally, orientation.flippedVertically)
        if quarter && format.chromaShift.x != format.chromaShift.y {
            throw MediaError(.unsupported, "a quarter turn of \(format.name) pictures would need other chroma subsampling; use --no-autorotate")
        }
        let interleaved = format == .nv12 || format == .p010
        // Per plane: bytes per sample (a chroma pair counts as one), samples per row, rows.
        let shapes: [(bytes: Int, columns: Int, rows: Int)] = (0..<format.planeCount).map { i in
            let size = frame.planeSize(i)
            let pair = interleaved && i == 1 ? 2 : 1
            return (format.bytesPerComponent * pair, size.width / pair, size.height)
        }
        // Each plane starts on a 64-byte boundary, so 16- and 32-bit samples are read aligned.
        let sizes = shapes.map { (($0.rows * $0.bytes * $0.columns) + 63) & ~63 }
        let memory = UnsafeMutableRawPointer.allocate(byteCount: max(1, sizes.reduce(0, +)), alignment: 64)
        nonisolated(unsafe) let owned = memory
        var out = frame
        out.storage = FrameStorage { owned.deallocate() }
        out.planes = []
        if quarter {
            (out.width, out.height) = (frame.height, frame.width)
            if frame.sampleAspectRatio.numerator > 0 {
                out.sampleAspectRatio = Rational(frame.sampleAspectRatio.denominator, frame.sampleAspectRatio.numerator)
            }
        }
        var offset = 0
        withExtendedLifetime(frame.storage) {
            for (i, shape) in shapes.enumerated() {
                let (pw, ph) = (shape.columns, shape.rows)
                let (dw, dh) = quarter ? (ph, pw) : (pw, ph)
                let src = frame.planes[i], dst = memory + offset
                let stride = dw * shape.bytes
                func turn<T>(_: T.Type) {
                    let d = dst.assumingMemoryBound(to: T.self)
                    for y in 0..<dh {
                        let row = d + y * dw
                        let sy = flipY ? dh - 1 - y : y
                        if quarter {
                            // Output column x, row sy (before the flips) is input column sy, row x.
                            for x in 0..<dw {
                                let sx = flipX ? dw - 1 - x : x
                                row[x] = (src.base + sx * src.stride).assumingMemoryBound(to: T.self)[sy]
                            }
                        } else {
                            let s = (src.base + sy * src.stride).assumingMemoryBound(to: T.self)
                            if flipX {
                                for x in 0..<dw { row[x] = s[dw - 1 - x] }
                            } else {
                                for x in 0..<dw { row[x] = s[x] }
                            }
                        }
                    }
                }
                switch shape.bytes {
                case 1: turn(UInt8.self)
                case 2: turn(UInt16.self)
                default: turn(UInt32.self)
                }
                out.planes.append(Plane(base: UnsafeRawPointer(dst), stride: stride, length: stride * dh))
                offset += sizes[i]
            }
        }
        return out
    }

    /// Packs `frame` into `output` (resized to the frame size).
    /// - Throws: `.unsupported` for a source format that cannot be packed without a
    ///   lossy conversion (naming the format and what to ask for instead).
    public static func pack(_ frame: Frame, as format: RawPictureFormat, into output: inout [UInt8]) throws {
        let size = format.frameSize(width: frame.width, height: frame.height)
        if output.count != size { output = [UInt8](repeating: 0, count: size) }
        try output.withUnsafeMutableBufferPointer { try pack(frame, as: format, into: $0) }
    }

    /// Packs `frame` into `output`, which must hold at least
    /// `format.frameSize(width:height:)` bytes.
    /// - Throws: `.unsupported` for a source format that cannot be packed exactly,
    ///   `.invalidArgument` when `output` is too small.
    public static func pack(_ frame: Frame, as format: RawPictureFormat, into output: UnsafeMutableBufferPointer<UInt8>) throws {
        guard let src = frame.pixelFormat else {
            throw MediaError(.invalidArgument, "not a video frame")
        }
        guard canPack(src, as: format) else {
            throw MediaError(.unsupported, "decoded pictures are \(src.name); packing them as \(format.rawValue) needs a conversion first (PictureConverter, from MediaRegistry.makePictureConverter, to \(format.pixelFormat.name))")
        }
        let w = frame.width, h = frame.height
        guard output.count >= format.frameSize(width: w, height: h) else {
            throw MediaError(.invalidArgument, "the buffer holds \(output.count) bytes, a \(w)x\(h) \(format.rawValue) picture needs \(format.frameSize(width: w, height: h))")
        }
        packValidated(frame, as: format, into: output)
    }

    /// Packs `frame` into `output` without checks and without throwing: the caller has
    /// made sure that ``canPack(_:as:)`` holds and that `output` holds
    /// `format.frameSize(width:height:)` bytes. (The C API calls this directly.)
    public static func packValidated(_ frame: Frame, as format: RawPictureFormat, into output: UnsafeMutableBufferPointer<UInt8>) {
        guard let src = frame.pixelFormat else { return }
        let w = frame.width, h = frame.height
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        if format == .yuv420p10le {
            // 16-bit-word planar 4:2:0: the three planes, rows without padding.
            withExtendedLifetime(frame.storage) {
                let out = output.baseAddress!
                copyPlane(frame.planes[0], rowBytes: 2 * w, rows: h, to: out)
                copyPlane(frame.planes[1], rowBytes: 2 * cw, rows: ch, to: out + 2 * w * h)
                copyPlane(frame.planes[2], rowBytes: 2 * cw, rows: ch, to: out + 2 * (w * h + cw * ch))
            }
            return
        }
        withExtendedLifetime(frame.storage) {
            let out = output.baseAddress!
            copyPlane(frame.planes[0], rowBytes: w, rows: h, to: out)
            let chroma = out + w * h
            switch (src, format) {
            case (.nv12, .nv12):
                copyPlane(frame.planes[1], rowBytes: 2 * cw, rows: ch, to: chroma)
            case (.nv12, .i420):
                let u = chroma, v = chroma + cw * ch
                for y in 0..<ch {
                    let s = frame.planes[1].base.assumingMemoryBound(to: UInt8.self) + y * frame.planes[1].stride
                    for x in 0..<cw { u[y * cw + x] = s[2 * x]; v[y * cw + x] = s[2 * x + 1] }
                }
            case (_, .i420):
                copyPlane(frame.planes[1], rowBytes: cw, rows: ch, to: chroma)
                copyPlane(frame.planes[2], rowBytes: cw, rows: ch, to: chroma + cw * ch)
            case (_, .nv12):
                for y in 0..<ch {
                    let u = frame.planes[1].base.assumingMemoryBound(to: UInt8.self) + y * frame.planes[1].stride
                    let v = frame.planes[2].base.assumingMemoryBound(to: UInt8.self) + y * frame.planes[2].stride
                    let d = chroma + y * 2 * cw
                    for x in 0..<cw { d[2 * x] = u[x]; d[2 * x + 1] = v[x] }
                }
            case (_, .yuv420p10le):
                break   // packed above
            }
        }
    }

    @inline(__always)
    private static func copyPlane(_ p: Plane, rowBytes: Int, rows: Int, to dst: UnsafeMutablePointer<UInt8>) {
        if p.stride == rowBytes {
            (dst).update(from: p.base.assumingMemoryBound(to: UInt8.self), count: rowBytes * rows)
            return
        }
        for y in 0..<rows {
            (dst + y * rowBytes).update(from: p.base.assumingMemoryBound(to: UInt8.self) + y * p.stride, count: rowBytes)
        }
    }
}
