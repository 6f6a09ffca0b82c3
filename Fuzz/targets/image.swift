// libFuzzer target: the image sniffers and the completeness check, on any bytes.
// Retarget here when the image API changes (issue 13 rewrites completeness).
@testable import Loader

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImage(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = UnsafeBufferPointer(start: data, count: size)
    guard let info = ImageInfo.sniff(body) else { return 0 }
    if let width = info.width, width < 0 { fatalError("negative width \(width)") }
    if let height = info.height, height < 0 { fatalError("negative height \(height)") }
    // The loader hands the check the first 64 KiB and the last 1 KiB.
    let head = UnsafeBufferPointer(rebasing: body[..<min(size, 64 * 1024)])
    let tail = UnsafeBufferPointer(rebasing: body[max(0, size - ImageCompleteness.tailLength)...])
    _ = ImageCompleteness.problem(format: info.format, head: head, tail: tail, length: Int64(size))
    return 0
}
