extension ImageInfo {
    /// ICO: the largest entry of the directory (0 means 256). "00 00 01 00"
    /// is a weak signature, so the first entry must be plausible too.
    static func ico(_ b: Bytes) -> ImageInfo? {
        guard let count = b.u16le(4), count > 0 else { return nil }
        guard let firstSize = b.u32le(6 + 8), firstSize > 0,
              let firstOffset = b.u32le(6 + 12), firstOffset >= 6 + 16 * count,
              let planes = b.u16le(6 + 4), planes <= 1 else { return nil }
        var best: (w: Int, h: Int)?
        for n in 0..<min(count, FormatLimits.icoEntries) {
            let entry = 6 + n * 16
            guard let rawW = b.at(entry), let rawH = b.at(entry + 1) else { break }
            let w = rawW == 0 ? 256 : Int(rawW), h = rawH == 0 ? 256 : Int(rawH)
            if let current = best, current.w * current.h >= w * h { continue }
            best = (w, h)
        }
        return ImageInfo(format: .ico, width: best?.w, height: best?.h)
    }
}
