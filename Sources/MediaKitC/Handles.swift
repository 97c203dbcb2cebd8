// The C ABI's handles: retained Swift objects behind opaque pointers, checked
// against a table of live handles so that a NULL, closed or foreign pointer is
// MK_EINVAL instead of a crash.
import CMediaKit
import Foundation
import MediaKit

/// Live handles, by address.
enum Handles {
    nonisolated(unsafe) private static var live: Set<UInt> = []
    private static let lock = NSLock()

    /// Retains `object` and returns its handle.
    static func make(_ object: AnyObject) -> OpaquePointer {
        let raw = Unmanaged.passRetained(object).toOpaque()
        lock.withLock { _ = live.insert(UInt(bitPattern: raw)) }
        return OpaquePointer(raw)
    }

    /// The object behind `handle` if it is a live handle of type T.
    static func get<T: AnyObject>(_ handle: OpaquePointer?, as type: T.Type) -> T? {
        guard let handle else { return nil }
        let raw = UnsafeRawPointer(handle)
        guard lock.withLock({ live.contains(UInt(bitPattern: raw)) }) else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue() as? T
    }

    /// Releases the handle in `slot` (if live and of type T) and sets the slot to NULL.
    static func release<T: AnyObject>(_ slot: UnsafeMutablePointer<OpaquePointer?>?, as type: T.Type) {
        guard let slot, let handle = slot.pointee else { return }
        let raw = UnsafeRawPointer(handle)
        let object: AnyObject? = lock.withLock {
            guard live.contains(UInt(bitPattern: raw)) else { return nil }
            let o = Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue()
            guard o is T else { return nil }
            live.remove(UInt(bitPattern: raw))
            return o
        }
        if object != nil {
            Unmanaged<AnyObject>.fromOpaque(raw).release()
            slot.pointee = nil
        }
    }
}

/// A handle type that names itself in error messages.
protocol NamedHandle: AnyObject {
    /// "demuxer", "decoder", ...
    static var kind: String { get }
}

/// The object behind `handle` if it is a live handle of type T; otherwise nil, with an
/// MK_EINVAL message naming `function` and what was wrong (NULL, closed, another kind).
func liveHandle<T: NamedHandle>(_ type: T.Type, _ handle: OpaquePointer?, _ function: String) -> T? {
    if let h = Handles.get(handle, as: T.self) {
        if let d = h as? DemuxerHandle { d.uses &+= 1 }
        return h
    }
    fail(MK_EINVAL, "\(function): \(handle == nil ? "the \(T.kind) is NULL" : "not a live \(T.kind) (closed or freed, or another kind of handle)")")
    return nil
}

/// Records `message` as the calling thread's last error and returns `status`.
@discardableResult
func fail(_ status: mk_status, _ message: String) -> mk_status {
    mkc_set_last_error(message)
    return status
}

/// The status for a thrown error, with its message recorded.
func fail(_ error: Error) -> mk_status {
    guard let e = error as? MediaError else { return fail(MK_EFAIL, "\(error)") }
    return fail(status(for: e), e.description)
}

/// The status that stands for an error's kind.
func status(for e: MediaError) -> mk_status {
    switch e.kind {
    case .invalidData, .endOfFile: return MK_EDATA
    case .unsupported: return MK_EUNSUPPORTED
    case .notFound: return MK_ENOTFOUND
    case .io: return MK_EIO
    case .pluginABI: return MK_EPLUGIN
    case .state: return MK_ESTATE
    case .limit: return MK_ELIMIT
    case .truncated: return MK_ETRUNCATED
    case .invalidArgument: return MK_EINVAL
    case .sessionInvalidated: return MK_EINVALIDATED
    default: return MK_EFAIL
    }
}

/// Runs `body`, turning a thrown error into its status.
func guarded(_ body: () throws -> mk_status) -> mk_status {
    do { return try body() } catch { return fail(error) }
}

/// A C string that lives as long as its owner.
final class CString: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<CChar>
    init(_ s: String) { pointer = strdup(s) }
    deinit { free(pointer) }
}

/// Writes `value` to a caller's struct of `size` bytes (its struct_size): a caller built against
/// an older header, whose struct is shorter, gets the fields it knows and nothing past its end.
func copyOut<T>(_ value: T, to out: UnsafeMutablePointer<T>, size: UInt32) {
    let count = min(Int(size), MemoryLayout<T>.size)
    withUnsafeBytes(of: value) { UnsafeMutableRawPointer(out).copyMemory(from: $0.baseAddress!, byteCount: count) }
}

/// A caller's struct of `size` bytes (its struct_size) read over `defaults`: the fields an older
/// header's shorter struct lacks keep their defaults, and nothing past its end is read.
func copyIn<T>(_ defaults: T, from input: UnsafePointer<T>, size: UInt32) -> T {
    var value = defaults
    let count = min(Int(size), MemoryLayout<T>.size)
    withUnsafeMutableBytes(of: &value) { $0.baseAddress!.copyMemory(from: UnsafeRawPointer(input), byteCount: count) }
    return value
}

/// Writes `values` into the first elements of a C array (imported as a tuple of `T`);
/// values past the array's end are left out.
func setCArray<Tuple, T>(_ array: inout Tuple, _ values: [T]) {
    withUnsafeMutableBytes(of: &array) { raw in
        let elements = raw.bindMemory(to: T.self)
        for (k, value) in values.prefix(elements.count).enumerated() { elements[k] = value }
    }
}

/// Checks a caller-set struct_size against the size this library fills.
func sizeOK(_ size: UInt32, _ needed: Int, _ what: String) -> Bool {
    if Int(size) < needed {
        fail(MK_EINVAL, "\(what).struct_size is \(size); this library needs at least \(needed) (set it to sizeof(\(what)))")
        return false
    }
    return true
}

extension DemuxerHandle: NamedHandle { static var kind: String { "demuxer" } }
extension PacketHandle: NamedHandle { static var kind: String { "packet" } }
extension DecoderHandle: NamedHandle { static var kind: String { "decoder" } }
extension FrameHandle: NamedHandle { static var kind: String { "frame" } }
extension MuxerHandle: NamedHandle { static var kind: String { "muxer" } }
