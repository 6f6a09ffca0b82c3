// libFuzzer target: the stored-metadata decoder (bytes read back from disk),
// and the encoder on whatever it accepted.
@testable import DiskCache

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMetadata(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let meta = CacheMetadata.decode(UnsafeRawBufferPointer(start: data, count: size)) else { return 0 }
    let again = meta.encoded().withUnsafeBytes { CacheMetadata.decode($0) }
    if again == nil { fatalError("decoded metadata does not encode to decodable metadata") }
    return 0
}
