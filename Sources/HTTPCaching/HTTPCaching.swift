/// HTTPCaching: the rules of RFC 9111 for a private cache, as pure functions.
///
/// It owns freshness (explicit, heuristic, default lifetime), what may be
/// stored and with which headers, validator matching and the merge of a
/// `304` into a stored record, `Vary` normalisation, and what may be shared
/// with the remote tier. It works on header values and cache records it is
/// handed; it never does I/O, never talks to the network or the disk, and
/// never reads a clock: the caller passes `now`.
public enum HTTPCaching {}
