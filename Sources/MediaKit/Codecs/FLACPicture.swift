/// A picture stored in a FLAC PICTURE metadata block (cover art and the like).
public struct FLACPicture: Sendable, Hashable {
    /// The ID3v2 APIC picture type (3: front cover).
    public let type: Int
    /// The MIME type ("image/png"), or "-->" when `data` is a URL.
    public let mimeType: String
    /// The description (UTF-8).
    public let description: String
    /// Width and height in pixels, colour depth in bits per pixel, and colours used (indexed
    /// pictures), as the block states them.
    public let width: Int, height: Int, depth: Int, colors: Int
    /// The picture file's bytes.
    public let data: [UInt8]
    /// Offset of the metadata block in the file.
    public let offset: Int64

    /// Reads a PICTURE block's body.
    /// - Throws: `.invalidData` naming `offset` when a length runs past the block.
    init(_ b: [UInt8], offset: Int64, path: String) throws {
        var at = 0
        func u32() throws -> Int {
            guard at + 4 <= b.count else {
                throw MediaError(.invalidData, "the PICTURE block ends inside a field at byte \(at) of \(b.count)", path: path, offset: offset, context: "PICTURE")
            }
            defer { at += 4 }
            return Int(be32(b, at))
        }
        func bytes(_ n: Int) throws -> [UInt8] {
            guard n <= b.count - at else {
                throw MediaError(.invalidData, "a PICTURE field of \(n) bytes at byte \(at) runs past the block's \(b.count)", path: path, offset: offset, context: "PICTURE")
            }
            defer { at += n }
            return Array(b[at..<at + n])
        }
        type = try u32()
        mimeType = String(decoding: try bytes(try u32()), as: UTF8.self)
        description = String(decoding: try bytes(try u32()), as: UTF8.self)
        width = try u32()
        height = try u32()
        depth = try u32()
        colors = try u32()
        data = try bytes(try u32())
        self.offset = offset
    }
}
