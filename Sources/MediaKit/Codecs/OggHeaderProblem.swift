/// Why a header packet cannot be used (becomes a track's ``Track/unsupportedReason``).
struct OggHeaderProblem: Error, ExpressibleByStringInterpolation {
    let reason: String
    init(stringLiteral value: String) { reason = value }
}
