// libFuzzer target: Cache-Control and Age, as stored or received.
import HTTPCaching

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCacheControl(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parsed = CacheControl(text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
    if let maxAge = parsed.maxAge, maxAge < 0 { fatalError("negative max-age \(maxAge)") }
    _ = Freshness.ageSeconds(text)
    return 0
}
