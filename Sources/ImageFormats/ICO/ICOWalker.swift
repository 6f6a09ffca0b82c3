/// ICO and CUR: a directory of images, each with its offset and size; the
/// file ends where the last of them does.
struct ICOWalker: StructureWalker {
    private enum State { case header, directory, images, done }
    private var state = State.header
    private var count = 0
    private var ends: [Int64] = []

    mutating func start() -> WalkStep { .need(6) }

    mutating func advance(_ bytes: Bytes, at offset: Int64, crc: UInt32) -> WalkStep {
        switch state {
        case .header:
            guard let n = bytes.u16le(4), n > 0 else { return .failed("ICO has no images") }
            count = n
            state = .directory
            return .need(16 * n)
        case .directory:
            for k in 0..<count {
                guard let size = bytes.u32le(16 * k + 8), let start = bytes.u32le(16 * k + 12) else { return .undecidable }
                guard start >= 6 + 16 * count else { return .failed("ICO image \(k + 1) overlaps the directory") }
                ends.append(Int64(start) + Int64(size))
            }
            state = .images
            let position = offset + Int64(bytes.count)
            return .skip(max(0, (ends.max() ?? 0) - position), crcSeed: nil)
        case .images, .done:
            state = .done
            return .end
        }
    }

    func missing(length: Int64) -> String {
        switch state {
        case .header, .directory: return "ICO cut inside its directory"
        case .images, .done:
            let cut = ends.firstIndex { $0 > length }.map { "image \($0 + 1) of \(count)" } ?? "its images"
            return "ICO cut inside \(cut)"
        }
    }
}
