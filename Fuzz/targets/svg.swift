// libFuzzer target: the SVG sniffer alone (text input: seeds are SVG documents).
@testable import ImageFormats

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSVG(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let info = SVGSniffer.sniff(Bytes(UnsafeBufferPointer(start: data, count: size)))
    if let width = info?.width, width < 0 { fatalError("negative width \(width)") }
    if let height = info?.height, height < 0 { fatalError("negative height \(height)") }
    return 0
}
