/// A bare JPEG XL codestream (`FF 0A`): its headers are gathered as they
/// stream (at most `FormatLimits.jxlHeaderBytes` per frame) and read with
/// `JXLHeaders`; each frame's data is passed over by the length its TOC
/// gives, and the image ends after the frame marked last. What the headers
/// cannot tell without entropy decoding passes undecided.
struct JXLWalker: StructureWalker {
    private var buffer: [UInt8] = []
    private var image: JXLHeaders.Image?
    private var frames = 0
    private var inData = false
    private var lastFrame = false

    mutating func start() -> WalkStep { .stream }

    mutating func advance(_ bytes: Bytes, at offset: Int64, crc: UInt32) -> WalkStep {
        inData = false          // a frame's data has been passed over
        return lastFrame ? .end : .stream
    }

    mutating func stream(_ chunk: UnsafeBufferPointer<UInt8>, at offset: Int64) -> (used: Int, next: WalkStep?) {
        let before = buffer.count
        buffer.append(contentsOf: chunk)
        let parsed = buffer.withUnsafeBufferPointer { raw -> Result<(JXLHeaders.Image, JXLHeaders.Frame, Int), JXLHeaders.Stop> in
            var bits = JXLBits(Bytes(raw))
            do throws(JXLHeaders.Stop) {
                let image: JXLHeaders.Image
                if let known = self.image { image = known } else { image = try JXLHeaders.image(&bits) }
                let frame = try JXLHeaders.frame(&bits, image: image)
                return .success((image, frame, bits.byteOffset))
            } catch {
                return .failure(error)
            }
        }
        switch parsed {
        case .success(let (image, frame, headerLength)):
            let used = headerLength - before            // the header ended inside this chunk
            guard used >= 0 else { return (chunk.count, .undecidable) }
            self.image = image
            frames += 1
            lastFrame = frame.isLast
            inData = true
            buffer.removeAll()
            return (used, .skip(frame.dataLength, crcSeed: nil))
        case .failure(.needMore):
            return (chunk.count, buffer.count > FormatLimits.jxlHeaderBytes ? .undecidable : nil)
        case .failure(.unsupported):
            return (chunk.count, .undecidable)
        }
    }

    func missing(length: Int64) -> String {
        if inData { return "JPEG XL cut inside the data of frame \(frames)" }
        return image == nil ? "JPEG XL cut inside its headers" : "JPEG XL cut inside the header of frame \(frames + 1)"
    }
}
