// libFuzzer target: response header blocks, as the header callback checks
// them line by line and as the awaiting task parses the block.
@testable import Fetch

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHeaders(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let block = Array(UnsafeBufferPointer(start: data, count: size))
    _ = HTTPHeaders(parsing: block)
    var check = ResponseHeadCheck()
    var start = 0
    while start < block.count {
        let end = (block[start...].firstIndex(of: 0x0A) ?? block.count - 1) + 1
        let verdict = block[start..<end].withUnsafeBytes { check.accept($0) }
        if verdict == .malformed && check.problem == nil { fatalError("malformed without a reason") }
        start = end
    }
    return 0
}
