// libFuzzer target: Cache-Control and Age, as stored or received.
@testable import HTTPCaching

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCacheControl(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    // Each line one field value, split at its bytes (a "\r\n" is one `Character`, not two).
    let lines = input.split(separator: 0x0A, omittingEmptySubsequences: false)
    let parsed = CacheControl(lines.map { String(decoding: $0, as: UTF8.self) })
    if let maxAge = parsed.maxAge, maxAge < 0 { fatalError("negative max-age \(maxAge)") }
    // The byte-level entry (stored records' values, read in place), fed the raw lines, invalid
    // UTF-8 included, must read them as the String entry reads their repaired text.
    var bytes = CacheControl()
    for line in lines { bytes.add(utf8: UnsafeBufferPointer(rebasing: line)) }
    if bytes != parsed { fatalError("add(utf8:) reads \(bytes), the String entry \(parsed)") }
    _ = Freshness.ageSeconds(String(decoding: input, as: UTF8.self))
    return 0
}
