/// Packed raw-video layouts that decoded pictures can be written as.
public enum RawPictureFormat: String, Sendable, CaseIterable {
    /// 8-bit Y plane, then interleaved U/V at half resolution (the iOS decode sample's layout).
    case nv12
    /// 8-bit Y, U, V planes, chroma at half resolution (FFmpeg's yuv420p).
    case i420

    /// Bytes of one packed picture of `width` x `height`.
    public func frameSize(width: Int, height: Int) -> Int {
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        return width * height + 2 * cw * ch
    }
}

/// Packs decoded pictures into tightly packed NV12 or I420 rows (no stride padding),
/// byte-identical to `ffmpeg -f rawvideo -pix_fmt nv12|yuv420p` for 8-bit 4:2:0 sources.
public enum PicturePacker {
    /// Pixel formats that pack without any resampling or change of value.
    public static func canPackExactly(_ f: PixelFormat) -> Bool {
        f == .yuv420p || f == .yuvj420p || f == .nv12
    }

    /// Packs `frame` into `output` (resized to the frame size).
    /// - Throws: `.unsupported` for a source format that cannot be packed without a
    ///   lossy conversion (naming the format and what to ask for instead).
    public static func pack(_ frame: Frame, as format: RawPictureFormat, into output: inout [UInt8]) throws {
        guard let src = frame.pixelFormat else {
            throw MediaError(.invalidArgument, "not a video frame")
        }
        guard canPackExactly(src) else {
            throw MediaError(.unsupported, "decoded pictures are \(src.name); converting them to \(format.rawValue) needs a scaler that MediaKit does not have yet (8-bit 4:2:0 sources only)")
        }
        let w = frame.width, h = frame.height
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        let size = format.frameSize(width: w, height: h)
        if output.count != size { output = [UInt8](repeating: 0, count: size) }
        withExtendedLifetime(frame.storage) {
            output.withUnsafeMutableBufferPointer { outBuf in
                let out = outBuf.baseAddress!
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
                }
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
