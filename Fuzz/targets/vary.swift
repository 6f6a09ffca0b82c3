// libFuzzer target: the header names a Vary field lists.
import HTTPCaching

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVary(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for name in VaryRequest.names(text) where name.isEmpty { fatalError("empty name from \(text)") }
    return 0
}
