// mk_progress_callback: the C caller's progress callback, and its cancel.
import CMediaKit
import Foundation
import MediaKit

/// A caller's progress callback (or none) and whether it asked to stop.
final class ProgressRelay {
    private let callback: mk_progress_callback?
    private let user: UnsafeMutableRawPointer?
    /// True when the caller gave a callback.
    var isSet: Bool { callback != nil }
    /// True once the callback returned non-zero.
    private(set) var cancelled = false

    init(_ callback: mk_progress_callback?, _ user: UnsafeMutableRawPointer?) {
        self.callback = callback
        self.user = user
    }

    /// Calls the callback; false once it asked to stop (and every time after).
    func report(fraction: Double, done: Int64, total: Int64) -> Bool {
        guard !cancelled, let callback else { return !cancelled }
        let f = fraction.isFinite ? min(max(fraction, 0), 1) : 0
        if callback(user, f, done, total) != 0 { cancelled = true }
        return !cancelled
    }

    /// ``report(fraction:done:total:)`` that throws when the callback asked to stop, for the
    /// Swift pipelines whose progress closures stop them by throwing.
    func check(fraction: Double, done: Int64, total: Int64) throws {
        if !report(fraction: fraction, done: done, total: total) {
            throw MediaError(.state, "cancelled by the progress callback")
        }
    }

    /// Runs `body` as `guarded` does, but a stop the callback asked for is MK_ECANCELLED.
    func guarded(_ function: String, _ body: () throws -> mk_status) -> mk_status {
        do { return try body() } catch {
            if cancelled { return fail(MK_ECANCELLED, "\(function): cancelled by the progress callback; nothing was left under the target name") }
            return fail(error)
        }
    }
}
