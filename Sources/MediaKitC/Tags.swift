// The tag editor (include/mediakit/tags.h): mk-tag's edits through TagEditor.
import CMediaKit
import Foundation
import MediaKit

@_cdecl("mk_tag_edits_default")
public func mk_tag_edits_default(_ e: UnsafeMutablePointer<mk_tag_edits>?) -> Int32 {
    guard let e else { return fail(MK_EINVAL, "mk_tag_edits_default: edits is NULL") }
    e.pointee = mk_tag_edits()
    e.pointee.struct_size = UInt32(MemoryLayout<mk_tag_edits>.size)
    return MK_OK
}

/// The strings of a C list (`count` entries at `list`), checked.
private func strings(_ list: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int32, _ name: String) throws -> [String] {
    guard count >= 0, count <= 65536, count == 0 || list != nil else {
        throw MediaError(.invalidArgument, "mk_tag_edit: \(count) \(name) entries from \(list == nil ? "NULL" : "a list")")
    }
    return try (0..<Int(clamping: count)).map { i in
        guard let s = list?[i] else { throw MediaError(.invalidArgument, "mk_tag_edit: \(name)[\(i)] is NULL") }
        return String(cString: s)
    }
}

@_cdecl("mk_tag_edit")
public func mk_tag_edit(_ path: UnsafePointer<CChar>?, _ edits: UnsafePointer<mk_tag_edits>?, _ flags: UInt32,
                        _ method: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let path, let edits else { return fail(MK_EINVAL, "mk_tag_edit: \(path == nil ? "path" : "edits") is NULL") }
    let e = edits.pointee
    guard e.struct_size == UInt32(MemoryLayout<mk_tag_edits>.size) else {
        return fail(MK_EINVAL, "mk_tag_edit: struct_size is \(e.struct_size), not sizeof(mk_tag_edits) (\(MemoryLayout<mk_tag_edits>.size)); call mk_tag_edits_default")
    }
    guard flags & ~MK_TAG_EDIT_NO_IN_PLACE == 0 else { return fail(MK_EINVAL, "mk_tag_edit: unknown flags 0x\(String(flags, radix: 16))") }
    guard (e.remove_pictures == 0 || e.remove_pictures == 1) && (e.clear == 0 || e.clear == 1) else {
        return fail(MK_EINVAL, "mk_tag_edit: remove_pictures (\(e.remove_pictures)) and clear (\(e.clear)) take 0 or 1")
    }
    do {
        let cover = try e.cover_path.map { try TagEdits.cover(imagePath: String(cString: $0)) }
        let tagEdits = try TagEdits(settings: strings(e.set, e.set_count, "set"), removals: strings(e.remove, e.remove_count, "remove"),
                                    cover: cover, removePictures: e.remove_pictures == 1, clear: e.clear == 1)
        guard !tagEdits.isEmpty else {
            method?.pointee = MK_TAG_UNCHANGED
            return MK_OK
        }
        let written = try TagEditor.edit(path: String(cString: path), edits: tagEdits, allowInPlace: flags & MK_TAG_EDIT_NO_IN_PLACE == 0)
        switch written {
        case .inPlace: method?.pointee = MK_TAG_WRITTEN_IN_PLACE
        case .temporaryFile: method?.pointee = MK_TAG_WRITTEN_TEMPORARY_FILE
        case .remux: method?.pointee = MK_TAG_WRITTEN_REMUX
        case .unchanged: method?.pointee = MK_TAG_UNCHANGED
        }
        return MK_OK
    } catch {
        return fail(error)
    }
}
