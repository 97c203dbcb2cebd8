// Decodes the first video track of a file with the FFmpeg plugin built beside this program
// (the dependency's plugin product) and prints how many frames came out.
// Usage: Dependent FILE PLUGIN_DIR
import MediaKit

let args = CommandLine.arguments
guard args.count == 3 else { fatalError("usage: Dependent FILE PLUGIN_DIR") }
let registry = MediaRegistry()
_ = try registry.load(path: args[2] + "/libMediaKitPluginFFmpeg.so")
let demuxer = try registry.makeDemuxer(path: args[1])
guard let track = demuxer.tracks.first(where: { $0.mediaType == .video }) else {
    fatalError("\(args[1]) has no video track")
}
let decoder = try registry.makeDecoder(for: track.parameters, timeBase: track.timeBase)
var frames = 0
while let packet = try demuxer.read(track: track.index) {
    try decoder.decode(packet) { _ in frames += 1 }
}
try decoder.flush()
while try decoder.receive() != nil { frames += 1 }
print("MediaKit \(MediaKitVersion.string): \(frames) frames")
