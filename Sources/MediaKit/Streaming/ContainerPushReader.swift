import Foundation

/// A container's pull demuxer driven by pushed bytes: how ``AudioStreamParser`` reads WAV /
/// RF64, AIFF, CAF, FLAC, Ogg, MP4 with its `moov` first and MPEG-TS without a second parser
/// per container.
///
/// The demuxer runs on a thread of its own over a ``PushedBytes`` source. A read of bytes that
/// have not been pushed yet waits (the thread sleeps) until they are, or until the input ends;
/// it never fails for want of bytes. So the demuxer's state can never be left half advanced by
/// a short read, and it sees the same bytes, read the same way, whatever the chunking: its
/// packets and their order depend on the bytes alone (chunk invariance). ``push(_:)`` hands the
/// bytes over and returns once the demuxer has used every byte it can (it is waiting for bytes
/// past the end of those pushed, or it has ended), with what it produced meanwhile; only one
/// of the two threads runs at a time.
///
/// The source is not seekable and keeps ``CallbackSource/keptBehind`` bytes behind the
/// demuxer's last read, so memory is bounded by that, the header and sample tables the demuxer
/// keeps, and the bytes of one push: a layout that needs to go back (an MP4 whose `moov`
/// follows its media data) is refused by the demuxer with an error naming the layout, as it is
/// for a pipe.
final class ContainerPushReader {
    /// What the demuxer produced.
    enum Output: Sendable {
        /// The header was read: the first audio track and the file's tags.
        case opened(track: Track, metadata: Metadata, attachments: [Attachment], chapters: [Chapter], duration: Double?)
        /// A packet of that track.
        case packet(MediaKit.Packet)
        /// The input ended; a file cut short inside a packet gives its `.truncated` error.
        case ended(cut: MediaError?, warnings: [MediaError])
        /// The demuxer failed.
        case failed(MediaError)
    }

    let format: ContainerFormat
    private let source: PushedBytes
    private var done = false

    /// Starts `format`'s demuxer over bytes to be pushed.
    init(format: ContainerFormat, name: String) {
        self.format = format
        let source = PushedBytes(name: name)
        self.source = source
        let thread = Thread {
            Self.run(format: format, source: source)
        }
        thread.stackSize = 8 << 20
        thread.name = "mk-stream-parser"
        thread.start()
    }

    deinit { source.cancel() }

    /// The pushed bytes kept now (for the tests of the memory bound).
    var keptBytes: Int { source.keptBytes }

    /// Hands `bytes` to the demuxer; returns what it produced from them.
    func push(_ bytes: [UInt8]) -> [Output] {
        guard !done else { return [] }
        let out = source.append(bytes, final: false)
        if out.contains(where: { if case .ended = $0 { return true }; if case .failed = $0 { return true }; return false }) { done = true }
        return out
    }

    /// Ends the input; returns what the demuxer produced until its end.
    func finish() -> [Output] {
        guard !done else { return [] }
        done = true
        return source.append([], final: true)
    }

    /// The demuxer's thread: open, read the first audio track's packets, report the end.
    private static func run(format: ContainerFormat, source: PushedBytes) {
        do {
            let demuxer = try format.makeDemuxer(source)
            guard let track = demuxer.tracks.first(where: { $0.mediaType == .audio }) else {
                let kinds = demuxer.tracks.map { "\($0.mediaType)" }.joined(separator: ", ")
                throw MediaError(.unsupported, "the \(format.description) stream has no audio track (its tracks: \(kinds.isEmpty ? "none" : kinds))", path: source.name)
            }
            demuxer.select(tracks: [track.index])
            source.post(.opened(track: track, metadata: demuxer.metadata, attachments: demuxer.attachments, chapters: demuxer.chapters,
                                duration: demuxer.duration))
            var cut: MediaError?
            while let packet = try demuxer.read(untilCut: &cut) {
                if packet.trackIndex == track.index { source.post(.packet(packet)) }
            }
            source.post(.ended(cut: cut, warnings: demuxer.warnings))
        } catch is PushedBytes.Cancelled {
            return
        } catch let e as MediaError {
            source.post(.failed(e))
        } catch {
            source.post(.failed(MediaError(.invalidData, "\(error)", path: source.name)))
        }
        source.workerEnded()
    }
}

/// The bytes pushed to a ``ContainerPushReader``, as the ``ByteSource`` its demuxer reads on
/// its own thread. Not seekable and of unknown size (whenever the input ends: so the demuxer
/// reads the same way whatever the chunking); a read waits until its bytes have been pushed or
/// the input has ended. Every member is used under `condition`'s lock.
final class PushedBytes: ByteSource, @unchecked Sendable {
    /// Thrown into the demuxer's thread when its parser goes away.
    struct Cancelled: Error {}

    let name: String
    var knownSize: Int64? { nil }
    var isSeekable: Bool { false }

    private let condition = NSCondition()
    /// Bytes pushed and kept.
    private var window = StreamWindow()
    private var final = false
    private var cancelled = false
    /// The end of the read the demuxer waits for (nil while it runs).
    private var waitingFor: Int64?
    private var ended = false
    private var outbox: [ContainerPushReader.Output] = []

    init(name: String) { self.name = name }

    /// The bytes kept now: from keptBehind before the demuxer's last read to the last pushed.
    var keptBytes: Int {
        condition.lock()
        defer { condition.unlock() }
        return window.bytes.count
    }

    /// Appends bytes (and with `final`, ends the input); waits until the demuxer cannot go on
    /// without more bytes, or has ended; returns what it produced meanwhile.
    func append(_ bytes: [UInt8], final: Bool) -> [ContainerPushReader.Output] {
        condition.lock()
        defer { condition.unlock() }
        window.append(contentsOf: bytes)
        if final { self.final = true }
        // Wake the demuxer's thread only when its read can now be served (one byte pushed at a
        // time costs no thread switch per byte).
        if final || (waitingFor.map { $0 <= window.end } ?? true) { condition.broadcast() }
        while !ended && !(waitingFor.map { $0 > window.end && !self.final } ?? false) {
            condition.wait()
        }
        let out = outbox
        outbox.removeAll()
        return out
    }

    /// Stops the demuxer's thread at its next read.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// The demuxer's thread: something produced.
    func post(_ output: ContainerPushReader.Output) {
        condition.lock()
        outbox.append(output)
        condition.unlock()
    }

    /// The demuxer's thread has ended.
    func workerEnded() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }

    func readSome(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if buffer.count == 0 { return 0 }
        condition.lock()
        defer { condition.unlock() }
        if offset < window.start {
            throw MediaError(.unsupported, "the pushed stream has already passed offset \(offset) (bytes from \(window.start) on are kept); this layout needs the whole file (a file or memory), it cannot be parsed front to back",
                             path: name, offset: offset)
        }
        // The whole read (not only its first byte): read(at:) and readUpTo(at:) loop until it
        // is whole anyway, and the demuxer's thread wakes once per read instead of per push.
        let end = offset + Int64(buffer.count)
        while window.end < end && !final && !cancelled {
            waitingFor = end
            condition.broadcast()
            condition.wait()
        }
        waitingFor = nil
        if cancelled { throw Cancelled() }
        // Drop what lies more than keptBehind before this read, in steps of 256 KiB (a read
        // past the end of the stream, a box offset beyond the bytes pushed, drops what is kept).
        window.drop(before: offset, step: 1 << 18)
        return window.copy(at: offset, into: buffer)
    }
}
