// libFuzzer target: HTTP dates (Date, Expires, Last-Modified, Retry-After).
@testable import Fetch

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPDate(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let seconds = HTTPDate.parse(text) {
        // Every date that parses prints, and its IMF-fixdate parses to the same instant.
        let printed = HTTPDate.format(seconds)
        if HTTPDate.parse(printed) != seconds { fatalError("\(text) -> \(seconds) -> \(printed) does not round-trip") }
    }
    _ = RetryPolicy.retryAfterSeconds(text, now: 1_700_000_000)
    return 0
}
