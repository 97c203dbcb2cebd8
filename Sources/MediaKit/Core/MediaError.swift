#if canImport(Glibc)
import Glibc
#endif

/// The one error type of MediaKit.
///
/// Every failure carries a ``Kind`` (what went wrong, in a form code can test),
/// a human-readable message, and where it happened: the file, the byte offset
/// and, for container errors, the box path (for example `moov/trak[1]/mdia/minf/stbl/stsz`).
/// A failure that came from below MediaKit (a plugin's call, an operating-system call) also
/// keeps that cause, in ``underlying``.
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
        /// The decoder stopped for a reason other than the data it was given (a device plugin
        /// lost its device, a hardware session was torn down): the plugin ABI's
        /// `MK_EINVALIDATED`, as VideoToolbox's `kVTInvalidSessionErr`. A ``DecodeSession``
        /// rebuilds the decoder at once and sends it the packet again, without counting it as
        /// damaged data.
        public static let sessionInvalidated = Kind("session invalidated")
        public var description: String { name }
    }

    /// The failure below MediaKit that an error comes from.
    public enum Cause: Sendable, Equatable, CustomStringConvertible {
        /// A plugin call returned `status` (a negative MK_* code of mediakit_types.h), with the
        /// plugin's own message (its `last_error`, "" when it gave none).
        case plugin(status: Int32, message: String)
        /// An operating-system call failed with this `errno` value (ENOENT, EACCES, ENOSPC ...).
        case system(errno: Int32)

        /// "plugin status -3: message" or "errno 2 (No such file or directory)".
        public var description: String {
            switch self {
            case .plugin(let status, let message):
                return "plugin status \(status)" + (message.isEmpty ? "" : ": \(message)")
            case .system(let code):
                return "errno \(code) (\(String(cString: strerror(code))))"
            }
        }
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
    /// The plugin status or `errno` this error comes from, nil when MediaKit itself found the
    /// problem. Not part of ``description``, whose message already says it in words.
    public var underlying: Cause?

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, path: String? = nil, offset: Int64? = nil, context: String? = nil,
                underlying: Cause? = nil) {
        self.kind = kind
        self.message = message
        self.path = path
        self.offset = offset
        self.context = context
        self.underlying = underlying
    }

    /// Creates the error of a failed operating-system call: the message is `what` followed by
    /// the system's words for `code` (`strerror`), and ``underlying`` is `.system(errno: code)`.
    public init(_ kind: Kind, _ what: String, errno code: Int32, path: String? = nil, offset: Int64? = nil) {
        self.init(kind, "\(what): \(String(cString: strerror(code)))", path: path, offset: offset, underlying: .system(errno: code))
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
