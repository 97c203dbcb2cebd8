/// The MIME type of a still picture by its codec (FFmpeg's names), as libavformat's muxers
/// write a cover of that codec (`ff_id3v2_mime_tags`): "" for a codec that is not a picture
/// format.
enum PictureCodec {
    static func mimeType(_ codec: CodecID) -> String {
        switch codec.rawValue {
        case "mjpeg": return "image/jpeg"
        case "png": return "image/png"
        case "bmp": return "image/bmp"
        case "gif": return "image/gif"
        case "tiff": return "image/tiff"
        case "webp": return "image/webp"
        default: return ""
        }
    }
}
