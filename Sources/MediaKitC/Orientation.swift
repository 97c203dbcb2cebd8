// mk_orientation: PictureOrientation as C sees it (from a display matrix, from an angle), and
// mk_frame_orient, which turns a frame's picture by one (Frame.oriented).
import CMediaKit
import MediaKit

extension mk_orientation {
    /// The C form of `o`.
    init(_ o: PictureOrientation) {
        self.init(transposed: o.transposed ? 1 : 0, hflip: o.flippedHorizontally ? 1 : 0, vflip: o.flippedVertically ? 1 : 0)
    }
}

@_cdecl("mk_orientation_from_matrix")
public func mk_orientation_from_matrix(_ matrix: UnsafePointer<Int32>?, _ out: UnsafeMutablePointer<mk_orientation>?) -> Int32 {
    guard let matrix else { return fail(MK_EINVAL, "mk_orientation_from_matrix: matrix is NULL") }
    guard let out else { return fail(MK_EINVAL, "mk_orientation_from_matrix: out is NULL") }
    out.pointee = mk_orientation(PictureOrientation(displayMatrix: Array(UnsafeBufferPointer(start: matrix, count: 9))))
    return MK_OK
}

@_cdecl("mk_orientation_clockwise")
public func mk_orientation_clockwise(_ degrees: Int32, _ out: UnsafeMutablePointer<mk_orientation>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_orientation_clockwise: out is NULL") }
    guard let o = PictureOrientation(clockwise: Int(degrees)) else {
        return fail(MK_EINVAL, "mk_orientation_clockwise: pictures turn by 0, 90, 180 or 270 degrees, not \(degrees)")
    }
    out.pointee = mk_orientation(o)
    return MK_OK
}

@_cdecl("mk_frame_orient")
public func mk_frame_orient(_ f: OpaquePointer?, _ orientation: UnsafePointer<mk_orientation>?,
                            _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_frame_orient: out is NULL") }
    out.pointee = nil
    guard let h = liveHandle(FrameHandle.self, f, "mk_frame_orient") else { return MK_EINVAL }
    guard let o = orientation?.pointee else { return fail(MK_EINVAL, "mk_frame_orient: orientation is NULL") }
    let fields = [o.transposed, o.hflip, o.vflip]
    guard fields.allSatisfy({ $0 == 0 || $0 == 1 }) else {
        return fail(MK_EINVAL, "mk_frame_orient: orientation {transposed \(o.transposed), hflip \(o.hflip), vflip \(o.vflip)} has a field other than 0 or 1")
    }
    return guarded {
        let turned = try h.frame.oriented(PictureOrientation(transposed: o.transposed == 1, flippedHorizontally: o.hflip == 1,
                                                             flippedVertically: o.vflip == 1))
        out.pointee = Handles.make(FrameHandle(turned))
        return MK_OK
    }
}
