/// Runs `step`, whose failure the caller goes without on purpose, and
/// returns its result, or nil when it failed.
///
/// For the few writes whose failure changes nothing a run reports or
/// promises (an older entry left stale, a partial body not kept for a
/// resume): `consequence` says, where it is called, what a failure costs,
/// so that no error vanishes unexplained as it would in a bare `try?`.
/// Any other error is handled or reported (STYLE: an I/O error that
/// vanishes loses data).
@discardableResult @inlinable
public func bestEffort<T, E: Error>(_ consequence: StaticString, _ step: () throws(E) -> T) -> T? {
    do { return try step() } catch { return nil }
}
