/// The one error type of MediaKit.
///
/// Every failure carries a ``Kind`` (what went wrong, in a form code can test),
/// a human-readable message, and where it happened: the file, the byte offset
/// and, for container errors, the box path (for example `moov/trak[1]/mdia/minf/stbl/stsz`).
public struct MediaError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of failure this is. Extensible: new kinds may be added.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The input is malformed: a box is too short, a table is inconsistent, ...
        public static let invalidData = Kind("invalid data")
        /// The input is well-formed but uses something MediaKit does not support.
        public static let unsupported = Kind("unsupported")
        /// A file, track, plugin or decoder was not found.
        public static let notFound = Kind("not found")
        /// An operating-system I/O call failed (open, read, write, rename ...).
        public static let io = Kind("I/O error")
        /// A plugin was built for another ABI version or broke the ABI contract.
        public static let pluginABI = Kind("plugin ABI")
        /// A call was made in the wrong state (write after finish, send after drain ...).
        public static let state = Kind("invalid state")
        /// A size or count is above a hard limit: a hostile or broken file.
        public static let limit = Kind("limit exceeded")
        /// An argument was out of range.
        public static let invalidArgument = Kind("invalid argument")
        /// A decoder or other backend failed.
        public static let backend = Kind("backend failure")
        /// The end of the input was reached where more data was required.
        public static let endOfFile = Kind("unexpected end of file")
        /// The file is cut short: it ends inside a packet, page or frame. A demuxer's
        /// `read()` throws it once, after the last packet the file holds (that packet may be
        /// partial: ``Packet/isTruncated``), and returns nil afterwards. Decoding treats it as
        /// the end of the input, with a warning (``FileDecodeResult/warnings``).
        public static let truncated = Kind("file truncated")
        public var description: String { name }
    }

    /// What went wrong.
    public var kind: Kind
    /// A sentence saying what was expected and what was found.
    public var message: String
    /// The file being read or written, if any.
    public var path: String?
    /// The byte offset in `path` where the problem was found, if known.
    public var offset: Int64?
    /// The box path (MP4) or page/packet context where the problem was found.
    public var context: String?

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, path: String? = nil, offset: Int64? = nil, context: String? = nil) {
        self.kind = kind
        self.message = message
        self.path = path
        self.offset = offset
        self.context = context
    }

    /// `path: kind at offset N in <context>: message`.
    public var description: String {
        var s = ""
        if let path { s += "\(path): " }
        s += "\(kind)"
        if let offset { s += " at offset \(offset)" }
        if let context { s += " in \(context)" }
        s += ": \(message)"
        return s
    }

    /// The same error with `path` filled in when it was not set.
    public func at(path: String) -> MediaError {
        var e = self
        if e.path == nil { e.path = path }
        return e
    }
}
