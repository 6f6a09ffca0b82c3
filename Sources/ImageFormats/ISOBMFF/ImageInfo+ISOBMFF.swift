/// AVIF and HEIF: ISO base media files (`ftyp`, then boxes). The size is
/// the `ispe` property of the primary item (`pitm` → `ipma` → `ipco`), not
/// merely the first `ispe` found: grid images store a small tile size first.
extension ImageInfo {
    static let avifBrands: Set<String> = ["avif", "avis"]
    static let heifBrands: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs", "mif1", "msf1", "mif2", "miaf"]

    static func isobmff(_ b: Bytes) -> ImageInfo? {
        guard let ftypSize = b.u32be(0), ftypSize >= 16 else { return nil }
        var brands: [String] = [String(decoding: b.slice(8, 4), as: UTF8.self)]
        var offset = 16
        while offset + 4 <= min(ftypSize, b.count) {
            brands.append(String(decoding: b.slice(offset, 4), as: UTF8.self))
            offset += 4
        }
        let format: ImageFormat
        if brands.contains(where: avifBrands.contains) {
            format = .avif
        } else if brands.contains(where: heifBrands.contains) {
            format = .heif
        } else {
            return nil   // MP4 video, QuickTime, raw camera files…: not an image we accept
        }
        guard let meta = Box.boxes(b, from: ftypSize, to: b.count).first(where: { $0.type == "meta" }) else {
            return ImageInfo(format: format)
        }
        let size = primarySize(b, meta: meta)
        return ImageInfo(format: format, width: size?.width, height: size?.height)
    }

    private static func primarySize(_ b: Bytes, meta: Box) -> (width: Int?, height: Int?)? {
        let children = Box.boxes(b, from: meta.start + 4, to: meta.end)   // meta is a FullBox
        var primary: Int?
        if let pitm = children.first(where: { $0.type == "pitm" }) {
            primary = b.at(pitm.start) == 0 ? b.u16be(pitm.start + 4) : b.u32be(pitm.start + 4)
        }
        guard let iprp = children.first(where: { $0.type == "iprp" }) else { return nil }
        let iprpChildren = Box.boxes(b, from: iprp.start, to: iprp.end)
        guard let ipco = iprpChildren.first(where: { $0.type == "ipco" }) else { return nil }
        let properties = Box.boxes(b, from: ipco.start, to: ipco.end)
        func ispe(_ box: Box) -> (width: Int?, height: Int?) { (b.u32be(box.start + 4), b.u32be(box.start + 8)) }
        if let primary, let ipma = iprpChildren.first(where: { $0.type == "ipma" }) {
            let associated = associations(b, ipma: ipma, item: primary)
                .filter { $0 >= 1 && $0 <= properties.count }.map { properties[$0 - 1] }
            if let coded = associated.first(where: { $0.type == "ispe" }) {
                return transformed(b, ispe(coded), by: associated)
            }
        }
        return properties.first { $0.type == "ispe" }.map(ispe)
    }

    /// The size a decoder shows: the coded size (`ispe`) through the item's
    /// transformative properties, in their `ipma` order, as libheif (1.17
    /// and later) applies them: `clap` crops to its clean aperture, `irot`
    /// by 90° or 270° swaps width and height (`imir` keeps the size).
    static func transformed(_ b: Bytes, _ size: (width: Int?, height: Int?), by properties: [Box]) -> (width: Int?, height: Int?) {
        guard var width = size.width, var height = size.height else { return size }
        for property in properties {
            switch property.type {
            case "clap":
                guard let crop = CleanAperture(b, at: property.start),
                      let w = crop.horizontal(width), let h = crop.vertical(height) else { continue }
                (width, height) = (w, h)
            case "irot":
                if let angle = b.at(property.start), angle & 1 == 1 { (width, height) = (height, width) }
            default:
                continue
            }
        }
        return (width, height)
    }

    /// 1-based `ipco` indices associated with `item` in an `ipma` box.
    private static func associations(_ b: Bytes, ipma: Box, item: Int) -> [Int] {
        guard let version = b.at(ipma.start), let flags = b.at(ipma.start + 3),
              let entryCount = b.u32be(ipma.start + 4) else { return [] }
        let wideIndex = flags & 1 == 1
        var offset = ipma.start + 8
        for _ in 0..<min(entryCount, FormatLimits.ipmaEntries) {
            guard let id = version < 1 ? b.u16be(offset) : b.u32be(offset) else { return [] }
            offset += version < 1 ? 2 : 4
            guard let count = b.at(offset) else { return [] }
            offset += 1
            var indices: [Int] = []
            for _ in 0..<Int(count) {
                if wideIndex {
                    guard let value = b.u16be(offset) else { return [] }
                    indices.append(value & 0x7FFF)
                    offset += 2
                } else {
                    guard let value = b.at(offset) else { return [] }
                    indices.append(Int(value & 0x7F))
                    offset += 1
                }
            }
            if id == item { return indices }
            if offset >= ipma.end { break }
        }
        return []
    }
}
