// mk_frame: what C sees of a decoded frame, and packing it into a caller's buffer.
import CMediaKit
import Foundation
import MediaKit

/// A frame handed to C.
final class FrameHandle {
    let frame: Frame
    init(_ frame: Frame) { self.frame = frame }
}

@_cdecl("mk_frame_get_info")
public func mk_frame_get_info(_ f: OpaquePointer?, _ info: UnsafeMutablePointer<mk_frame_info>?) -> Int32 {
    guard let h = liveHandle(FrameHandle.self, f, "mk_frame_get_info") else { return MK_EINVAL }
    guard let info else { return fail(MK_EINVAL, "mk_frame_get_info: info is NULL") }
    guard sizeOK(info.pointee.struct_size, MemoryLayout<mk_frame_info>.size, "mk_frame_info") else { return MK_EINVAL }
    let fr = h.frame
    var i = mk_frame_info()
    i.struct_size = info.pointee.struct_size
    i.media_type = mediaTypeCode(fr.mediaType)
    i.format = fr.pixelFormat?.rawValue ?? fr.sampleFormat?.rawValue ?? 0
    i.pts = fr.pts
    i.duration = fr.duration
    i.time_base_num = Int32(clamping: fr.timeBase.numerator)
    i.time_base_den = Int32(clamping: fr.timeBase.denominator)
    i.width = Int32(clamping: fr.width)
    i.height = Int32(clamping: fr.height)
    i.sample_rate = Int32(clamping: fr.sampleRate)
    i.channels = Int32(clamping: fr.channels)
    i.sample_count = Int32(clamping: fr.sampleCount)
    i.plane_count = Int32(min(8, fr.planes.count))
    withUnsafeMutableBytes(of: &i.planes) { raw in
        let planes = raw.bindMemory(to: UnsafePointer<UInt8>?.self)
        for (k, p) in fr.planes.prefix(8).enumerated() { planes[k] = p.base.assumingMemoryBound(to: UInt8.self) }
    }
    withUnsafeMutableBytes(of: &i.strides) { raw in
        let strides = raw.bindMemory(to: Int64.self)
        for (k, p) in fr.planes.prefix(8).enumerated() { strides[k] = Int64(p.stride) }
    }
    withUnsafeMutableBytes(of: &i.plane_sizes) { raw in
        let sizes = raw.bindMemory(to: Int64.self)
        for (k, p) in fr.planes.prefix(8).enumerated() { sizes[k] = Int64(p.length) }
    }
    info.pointee = i
    return MK_OK
}

@_cdecl("mk_frame_pack")
public func mk_frame_pack(_ f: OpaquePointer?, _ layout: Int32, _ buffer: UnsafeMutablePointer<UInt8>?, _ capacity: Int,
                          _ size: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let h = liveHandle(FrameHandle.self, f, "mk_frame_pack") else { return MK_EINVAL }
    guard let size else { return fail(MK_EINVAL, "mk_frame_pack: size is NULL") }
    let fr = h.frame
    switch layout {
    case MK_PACK_NV12, MK_PACK_I420:
        guard fr.mediaType == .video else { return fail(MK_EINVAL, "mk_frame_pack: a video layout for an audio frame") }
        let format: RawPictureFormat = layout == MK_PACK_NV12 ? .nv12 : .i420
        let needed = format.frameSize(width: fr.width, height: fr.height)
        size.pointee = needed
        guard let buffer else { return MK_OK }
        guard capacity >= needed else { return fail(MK_EINVAL, "mk_frame_pack: the buffer holds \(capacity) bytes, \(needed) are needed") }
        var picture = fr
        if let source = fr.pixelFormat, PicturePacker.needsConversion(fr, as: format) {
            // 10-bit, 4:4:4, 4:2:2, full range ...: a plugin's picture converter (libswscale), as ffmpeg converts.
            switch MediaRegistry.shared.convertPicture(fr, to: format.pixelFormat) {
            case .success(let converted): picture = converted
            case .failure(let e):
                return fail(e.kind == .notFound ? MK_EUNSUPPORTED : status(for: e), "mk_frame_pack: decoded pictures are \(source.name); packing them as \(format.rawValue): \(e.message)")
            }
        }
        PicturePacker.packValidated(picture, as: format, into: UnsafeMutableBufferPointer(start: buffer, count: capacity))
        return MK_OK
    case MK_PACK_S16, MK_PACK_F32:
        guard fr.mediaType == .audio else { return fail(MK_EINVAL, "mk_frame_pack: an audio layout for a video frame") }
        let format: PCMFormat = layout == MK_PACK_S16 ? .s16 : .f32
        let needed = fr.sampleCount * fr.channels * format.bytesPerSample
        size.pointee = needed
        guard let buffer else { return MK_OK }
        guard capacity >= needed else { return fail(MK_EINVAL, "mk_frame_pack: the buffer holds \(capacity) bytes, \(needed) are needed") }
        var bytes: [UInt8] = []
        AudioSampleConverter.append(fr, as: format, to: &bytes)
        bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: min(needed, $0.count)) }
        return MK_OK
    default:
        return fail(MK_EINVAL, "mk_frame_pack: unknown layout \(layout) (MK_PACK_NV12, MK_PACK_I420, MK_PACK_S16 or MK_PACK_F32)")
    }
}

@_cdecl("mk_frame_free")
public func mk_frame_free(_ frame: UnsafeMutablePointer<OpaquePointer?>?) {
    Handles.release(frame, as: FrameHandle.self)
}
