extension ContainerFormat {
    /// AIFF and AIFF-C (Apple's Audio Interchange File Format; ``AIFFDemuxer``).
    public static let aiff = ContainerFormat(
        name: "aiff", description: "AIFF / AIFF-C", extensions: ["aiff", "aif", "aifc", "afc"],
        mimeTypes: ["audio/aiff", "audio/x-aiff", "audio/x-aifc"],
        probe: { head, _ in
            // "FORM", a size, then "AIFF" or "AIFC" (FFmpeg's aiff_probe: a signature).
            guard head.count >= 12 else { return 0 }
            return Array(head[0..<4]) == Array("FORM".utf8) && Array(head[8..<11]) == Array("AIF".utf8)
                && (head[11] == UInt8(ascii: "F") || head[11] == UInt8(ascii: "C")) ? 100 : 0
        },
        makeDemuxer: { try AIFFDemuxer(source: $0) })
}
