// libFuzzer target: the image sniffers and the streaming structure check
// (every format's walker, SVG included), on any bytes, fed in two pieces.
@testable import ImageFormats

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImage(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = UnsafeBufferPointer(start: data, count: size)
    if let info = ImageInfo.sniff(body) {
        if let width = info.width, width < 0 { fatalError("negative width \(width)") }
        if let height = info.height, height < 0 { fatalError("negative height \(height)") }
    }
    // The loader feeds the check the bytes as they arrive, in chunks of any size.
    var structure = ImageStructure()
    let split = size == 0 ? 0 : Int(data[0]) % (size + 1)
    structure.feed(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(body)[..<split]))
    structure.feed(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(body)[split...]))
    _ = structure.verdict
    _ = structure.problem
    if let size = structure.size, size.width < 0 || size.height < 0 { fatalError("negative size \(size)") }
    return 0
}
