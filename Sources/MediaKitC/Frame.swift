// mk_frame: what C sees of a decoded frame, packing it into a caller's buffer through the
// picture pipeline, and the views of its memory when it needs no packing.
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
    // The 0.1 struct ended at plane_sizes; newer fields are filled when struct_size covers them.
    guard sizeOK(info.pointee.struct_size, MemoryLayout<mk_frame_info>.offset(of: \mk_frame_info.is_keyframe)!, "mk_frame_info") else { return MK_EINVAL }
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
    let planes = fr.planes.prefix(8)
    setCArray(&i.planes, planes.map { Optional($0.base.assumingMemoryBound(to: UInt8.self)) })
    setCArray(&i.strides, planes.map { Int64($0.stride) })
    setCArray(&i.plane_sizes, planes.map { Int64($0.length) })
    i.is_keyframe = fr.isKeyframe ? 1 : 0
    i.color_range = Int32(fr.colorRange.rawValue)
    i.color_primaries = Int32(clamping: fr.colorPrimaries.rawValue)
    i.color_transfer = Int32(clamping: fr.colorTransfer.rawValue)
    i.color_space = Int32(clamping: fr.colorSpace.rawValue)
    i.chroma_location = Int32(fr.chromaLocation.rawValue)
    i.sample_aspect_num = Int32(clamping: fr.sampleAspectRatio.numerator)
    i.sample_aspect_den = Int32(clamping: fr.sampleAspectRatio.denominator)
    i.channel_mask = fr.channelMask
    copyOut(i, to: info, size: i.struct_size)
    return MK_OK
}

@_cdecl("mk_frame_pack")
public func mk_frame_pack(_ f: OpaquePointer?, _ layout: Int32, _ buffer: UnsafeMutablePointer<UInt8>?, _ capacity: Int,
                          _ size: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let h = liveHandle(FrameHandle.self, f, "mk_frame_pack") else { return MK_EINVAL }
    guard let size else { return fail(MK_EINVAL, "mk_frame_pack: size is NULL") }
    let fr = h.frame
    if let pipeline = FramePipelines.for(layout) {
        return packPicture(fr, pipeline, buffer, capacity, size, "mk_frame_pack")
    }
    switch layout {
    case MK_PACK_S16, MK_PACK_F32:
        guard fr.mediaType == .audio else { return fail(MK_EINVAL, "mk_frame_pack: an audio layout for a video frame") }
        let format: SampleFormat = layout == MK_PACK_S16 ? .s16 : .f32
        let needed = fr.sampleCount * fr.channels * format.bytesPerSample
        size.pointee = needed
        guard let buffer else { return MK_OK }
        guard capacity >= needed else { return fail(MK_EINVAL, "mk_frame_pack: the buffer holds \(capacity) bytes, \(needed) are needed") }
        // Straight into the caller's buffer: nothing allocated per frame.
        _ = AudioSampleConverter.write(fr, as: format, into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
        return MK_OK
    default:
        return fail(MK_EINVAL, "mk_frame_pack: unknown layout \(layout) (\(FramePipelines.layoutList))")
    }
}

@_cdecl("mk_pack_layout_name")
public func mk_pack_layout_name(_ layout: Int32) -> UnsafePointer<CChar>? {
    FramePipelines.names[layout].map { UnsafePointer($0) }
}

/// Packs a picture through `pipeline` into the caller's buffer (mk_frame_pack's and
/// mk_frame_pack_scaled's video case): *size is the bytes needed, also when buffer is NULL or
/// too small.
private func packPicture(_ fr: Frame, _ pipeline: PicturePipeline, _ buffer: UnsafeMutablePointer<UInt8>?, _ capacity: Int,
                         _ size: UnsafeMutablePointer<Int>, _ function: String) -> Int32 {
    guard fr.mediaType == .video, let source = fr.pixelFormat else { return fail(MK_EINVAL, "\(function): a video layout for an audio frame") }
    let out = pipeline.outputSize(of: fr)
    let needed = pipeline.layout.frameSize(width: out.width, height: out.height)
    size.pointee = needed
    guard let buffer else { return MK_OK }
    guard capacity >= needed else { return fail(MK_EINVAL, "\(function): the buffer holds \(capacity) bytes, \(needed) are needed") }
    do {
        // 10-bit, 4:4:4, 4:2:2, full range, another size ...: through a plugin's picture converter (libswscale), as ffmpeg converts.
        try pipeline.pack(fr, into: UnsafeMutableBufferPointer(start: buffer, count: capacity))
        return MK_OK
    } catch let e as MediaError {
        let scaled = pipeline.size.map { " at \($0.width)x\($0.height) (\(pipeline.filter.name))" } ?? ""
        return fail(e.kind == .notFound ? MK_EUNSUPPORTED : status(for: e),
                    "\(function): decoded pictures are \(fr.width)x\(fr.height) \(source.name); packing them as \(FramePipelines.name(of: pipeline.layout))\(scaled): \(e.message)")
    } catch {
        return fail(error)
    }
}

@_cdecl("mk_frame_pack_scaled")
public func mk_frame_pack_scaled(_ f: OpaquePointer?, _ layout: Int32, _ width: Int32, _ height: Int32, _ filter: Int32,
                                 _ buffer: UnsafeMutablePointer<UInt8>?, _ capacity: Int, _ size: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let h = liveHandle(FrameHandle.self, f, "mk_frame_pack_scaled") else { return MK_EINVAL }
    guard let size else { return fail(MK_EINVAL, "mk_frame_pack_scaled: size is NULL") }
    guard let format = FramePipelines.pictureLayouts[layout] else {
        return fail(MK_EINVAL, "mk_frame_pack_scaled: layout \(layout) is not a picture layout (MK_PACK_NV12, MK_PACK_I420, MK_PACK_RGB24 ... MK_PACK_P010)")
    }
    guard width > 0, height > 0, width <= FramePipelines.maxSide, height <= FramePipelines.maxSide else {
        return fail(MK_EINVAL, "mk_frame_pack_scaled: size \(width)x\(height) is out of range (1 to \(FramePipelines.maxSide))")
    }
    guard let scale = ScaleFilter(code: filter) else {
        return fail(MK_EINVAL, "mk_frame_pack_scaled: unknown scale filter \(filter) (MK_SCALE_*)")
    }
    let pipeline = FramePipelines.scaled(format, width: Int(width), height: Int(height), filter: scale)
    return packPicture(h.frame, pipeline, buffer, capacity, size, "mk_frame_pack_scaled")
}

/// The pipelines of `mk_frame_pack` (one per picture layout) and of `mk_frame_pack_scaled`
/// (one per layout, size and filter asked for lately), each with its converter cache.
enum FramePipelines {
    /// The pixel format of each picture layout (MK_PACK_*).
    static let pictureLayouts: [Int32: PixelFormat] = [
        MK_PACK_NV12: .nv12, MK_PACK_I420: .yuv420p, MK_PACK_RGB24: .rgb24, MK_PACK_BGR24: .bgr24, MK_PACK_RGBA: .rgba,
        MK_PACK_BGRA: .bgra, MK_PACK_GRAY8: .gray8, MK_PACK_GRAY16: .gray16, MK_PACK_RGB48: .rgb48, MK_PACK_P010: .p010,
    ]
    /// One pipeline per picture layout, each with its converter cache.
    private static let unscaled: [Int32: PicturePipeline] = pictureLayouts.mapValues { PicturePipeline(layout: $0) }
    /// The largest width or height mk_frame_pack_scaled makes (the plugin converter's limit).
    static let maxSide: Int32 = 16384

    /// A layout's name as mk_pack_layout_name gives it: ffmpeg's -pix_fmt ("gray", "rgb48le"), "i420" for yuv420p.
    static func name(of format: PixelFormat) -> String { format == .yuv420p ? "i420" : format.name }

    /// mk_pack_layout_name's strings, NUL-terminated and never freed.
    nonisolated(unsafe) static let names: [Int32: UnsafeMutablePointer<CChar>] = {
        var all = pictureLayouts.mapValues { name(of: $0) }
        all[MK_PACK_S16] = "s16"
        all[MK_PACK_F32] = "f32"
        return all.mapValues { strdup($0)! }
    }()

    /// The layouts for an error message.
    static var layoutList: String {
        names.keys.sorted().map { "\($0) \(String(cString: names[$0]!))" }.joined(separator: ", ")
    }

    /// The pipeline of a picture layout (MK_PACK_NV12 ...), nil for an audio or unknown one.
    static func `for`(_ layout: Int32) -> PicturePipeline? { unscaled[layout] }

    private struct Key: Hashable { let layout: PixelFormat, width: Int, height: Int, filter: ScaleFilter }
    private static let lock = NSLock()
    nonisolated(unsafe) private static var scaledPipelines: [Key: PicturePipeline] = [:]   // under `lock`
    /// Scaled pipelines kept; past it they are all dropped (a program asks for a few sizes).
    private static let scaledLimit = 8

    /// The pipeline that packs as `layout` at `width` x `height`.
    static func scaled(_ layout: PixelFormat, width: Int, height: Int, filter: ScaleFilter) -> PicturePipeline {
        let key = Key(layout: layout, width: width, height: height, filter: filter)
        return lock.withLock {
            if let p = scaledPipelines[key] { return p }
            if scaledPipelines.count >= scaledLimit { scaledPipelines.removeAll() }
            let p = PicturePipeline(layout: layout, size: (width, height), filter: filter)
            scaledPipelines[key] = p
            return p
        }
    }
}

@_cdecl("mk_frame_view")
public func mk_frame_view(_ f: OpaquePointer?, _ layout: Int32, _ view: UnsafeMutablePointer<mk_frame_view_info>?) -> Int32 {
    guard let h = liveHandle(FrameHandle.self, f, "mk_frame_view") else { return MK_EINVAL }
    guard let view else { return fail(MK_EINVAL, "mk_frame_view: view is NULL") }
    guard sizeOK(view.pointee.struct_size, MemoryLayout<mk_frame_view_info>.size, "mk_frame_view_info") else { return MK_EINVAL }
    var v = mk_frame_view_info()
    v.struct_size = view.pointee.struct_size
    switch layout {
    case _ where FramePipelines.for(layout) != nil:
        let fr = h.frame, layout = FramePipelines.for(layout)!.layout
        guard fr.pixelFormat != nil else { return fail(MK_EINVAL, "mk_frame_view: a video layout for an audio frame") }
        let shapes = layout.planes(width: fr.width, height: fr.height)
        v.plane_count = Int32(shapes.count)
        setCArray(&v.row_bytes, shapes.map { Int64($0.rowBytes) })
        setCArray(&v.rows, shapes.map { Int64($0.rows) })
        if let planes = PicturePipeline.views(of: fr, as: layout) {
            v.in_place = 1
            setCArray(&v.planes, planes.map { Optional($0.base.assumingMemoryBound(to: UInt8.self)) })
            setCArray(&v.strides, planes.map { Int64($0.stride) })
        } else {
            setCArray(&v.strides, shapes.map { Int64($0.rowBytes) })
        }
    case MK_PACK_S16, MK_PACK_F32:
        guard h.frame.mediaType == .audio else { return fail(MK_EINVAL, "mk_frame_view: an audio layout for a video frame") }
        // samples: no planes to describe (plane_count 0)
    default:
        return fail(MK_EINVAL, "mk_frame_view: unknown layout \(layout) (\(FramePipelines.layoutList))")
    }
    view.pointee = v
    return MK_OK
}

@_cdecl("mk_frame_free")
public func mk_frame_free(_ frame: UnsafeMutablePointer<OpaquePointer?>?) {
    Handles.release(frame, as: FrameHandle.self)
}
