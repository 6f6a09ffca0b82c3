// libFuzzer target: URL validation, the cache key's normalisation and
// password redaction, with the fast paths checked against the full ones.
@testable import DiskCache
@testable import Fetch
import Support

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzURL(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let url = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    var valid = true
    do { try FetchClient.validateFully(url) } catch { valid = false }
    if FetchClient.isPlainlyValid(url) && !valid { fatalError("fast path accepts what validation refuses: \(url)") }
    _ = redactURL(url)
    // Only URLs that pass validation are ever normalised (an invalid one such as
    // "x://a:b:/" has no stable normal form, and never reaches the cache).
    if valid, let normalized = try? CacheKey.normalizeFully(url) {
        if CacheKey.isNormalized(url) && normalized != url { fatalError("\(url) is said normalised but becomes \(normalized)") }
        if (try? CacheKey.normalizeFully(normalized)) != normalized { fatalError("normalising \(url) twice differs") }
    }
    return 0
}
