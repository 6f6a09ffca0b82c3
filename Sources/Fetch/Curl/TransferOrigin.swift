/// What the transfer loops need of a URL, read from it once per request
/// (`FetchClient.prepare`, possibly off the loops) instead of at each use.
struct TransferOrigin: Sendable {
    /// "host:port" of an https URL, as written (nil for any other scheme):
    /// its key in `CurlLoop.unconnectedHosts`.
    let multiplexingHost: Substring?
    /// `TransferLoops.homeHash` of the URL's "host:port" (nil: not an http(s) URL).
    let homeHash: UInt64?

    init(url: String) {
        // The URL's bytes read in place once: its bounds and its host's hash from them
        // (`origin(of:)`'s optional tuple holding a `Substring` was destroyed through
        // value witnesses, and hashing a `Substring`'s UTF-8 view cost ~40 instructions a byte).
        let found = url.utf8.withContiguousStorageIfAvailable { bytes in
            TransferLoops.originBounds(bytes).map {
                (secure: $0.secure, start: $0.start, end: $0.end,
                 hash: TransferLoops.homeHash(bytes: UnsafeBufferPointer(rebasing: bytes[$0.start..<$0.end])))
            }
        }
        guard let found else {   // not contiguous UTF-8 (a bridged string): through a copy
            let origin = TransferLoops.origin(of: url)
            multiplexingHost = origin.flatMap { $0.secure ? $0.hostPort : nil }
            homeHash = origin.map { TransferLoops.homeHash($0.hostPort) }
            return
        }
        homeHash = found?.hash
        if let found, found.secure {
            let utf8 = url.utf8
            let start = utf8.index(utf8.startIndex, offsetBy: found.start)
            multiplexingHost = url[start..<utf8.index(start, offsetBy: found.end - found.start)]
        } else {
            multiplexingHost = nil
        }
    }
}
