/// TIFF and BigTIFF: every directory (IFD) in the chain is read where it
/// lies as the body streams past it, with the strip or tile tables it points
/// to; the image ends where the last strip, tile or out-of-line tag value
/// does. A directory or table that lies behind the stream (an offset pointing
/// back) cannot be read without a second read of the body: such a file passes.
///
/// The first directory's width and height are kept (`size`): the header
/// sniff sees only the first 64 KiB, and many writers put the directory last.
struct TIFFWalker: StructureWalker {
    private enum Purpose {
        case header, bigHeader, count(ifd: Int), entries(ifd: Int, count: Int)
        case table(ifd: Int, offsets: Bool, type: Int, count: Int)
    }
    /// Reading `current`, passing over bytes up to it, or passing over the last strips to the end.
    private enum Phase { case reading, skipping, finishing, done }
    private struct Read { let offset: Int64; let length: Int; let purpose: Purpose }

    private var little = true
    private var big = false
    private var reads: [Read] = []
    private var current = Read(offset: 0, length: 8, purpose: .header)
    private var phase = Phase.reading
    private var directories = 0
    /// Strip/tile offsets and byte counts per directory, until both are known.
    private var offsets: [Int: [Int64]] = [:]
    private var counts: [Int: [Int64]] = [:]
    private var required: Int64 = 8
    private var captured = 0
    private(set) var size: (width: Int, height: Int)?

    mutating func start() -> WalkStep { .need(8) }

    mutating func advance(_ bytes: Bytes, at offset: Int64, crc: UInt32) -> WalkStep {
        switch phase {
        case .skipping:
            phase = .reading
            return .need(current.length)
        case .finishing, .done:
            phase = .done
            return .end
        case .reading:
            break
        }
        captured += bytes.count
        guard captured <= FormatLimits.tiffCapturedBytes else { return .undecidable }
        switch current.purpose {
        case .header:
            little = bytes.at(0) == 0x49
            big = u16(bytes, 2) == 43
            guard u16(bytes, 2) == 42 || big else { return .failed("not a TIFF header") }
            if big {
                current = Read(offset: 8, length: 8, purpose: .bigHeader)
                return .need(8)
            }
            schedule(u32(bytes, 4), .count(ifd: 0))
        case .bigHeader:
            schedule(u64(bytes, 0), .count(ifd: 0))
        case .count(let ifd):
            let count = big ? u64(bytes, 0) : u16(bytes, 0)
            guard count > 0, count <= FormatLimits.tiffDirectoryEntries else { return .failed("TIFF directory \(ifd + 1) has \(count) entries") }
            let entry = big ? 20 : 12, link = big ? 8 : 4
            let entries = Read(offset: offset + Int64(bytes.count), length: Int(count) * entry + link,
                               purpose: .entries(ifd: ifd, count: Int(count)))
            reads.insert(entries, at: 0)
            required = max(required, entries.offset + Int64(entries.length))
        case .entries(let ifd, let count):
            directory(bytes, at: offset, ifd: ifd, count: count)
        case .table(let ifd, let isOffsets, let type, let count):
            let width = type == 3 ? 2 : type == 16 ? 8 : 4
            let values = (0..<count).map { k -> Int64 in
                width == 2 ? u16(bytes, k * 2) : width == 8 ? u64(bytes, k * 8) : u32(bytes, k * 4)
            }
            table(values, ifd: ifd, offsets: isOffsets)
        }
        return next(position: offset + Int64(bytes.count))
    }

    /// The next read, in body order; when none is left, the end of the last strip.
    private mutating func next(position: Int64) -> WalkStep {
        reads.sort { $0.offset < $1.offset }
        guard !reads.isEmpty else {
            phase = required > position ? .finishing : .done
            return required > position ? .skip(required - position, crcSeed: nil) : .end
        }
        let read = reads.removeFirst()
        guard read.offset >= position else { return .undecidable }   // points back: would need a second read
        current = read
        guard read.offset > position else { return .need(read.length) }
        phase = .skipping
        return .skip(read.offset - position, crcSeed: nil)
    }

    private mutating func schedule(_ offset: Int64, _ purpose: Purpose) {
        guard offset >= 8 else { return }
        let length: Int
        switch purpose {
        case .count: length = big ? 8 : 2
        case .table(_, _, let type, let count): length = count * (type == 3 ? 2 : type == 16 ? 8 : 4)
        default: return
        }
        reads.append(Read(offset: offset, length: length, purpose: purpose))
        required = max(required, Self.sum(offset, Int64(length)))
    }

    private mutating func directory(_ b: Bytes, at offset: Int64, ifd: Int, count: Int) {
        directories += 1
        let entry = big ? 20 : 12, inline = big ? 8 : 4
        var width: Int?, height: Int?
        for k in 0..<count {
            let e = k * entry
            let tag = u16(b, e), type = Int(u16(b, e + 2))
            let n = big ? u64(b, e + 4) : u32(b, e + 4)
            let valueAt = e + (big ? 12 : 8)
            let unit: Int64 = [1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4, 16: 8, 17: 8, 18: 8][type] ?? 1
            guard n >= 0, n < FormatLimits.tiffEntryValues else { continue }
            let total = n * unit
            let value: Int64 = total > inline ? (big ? u64(b, valueAt) : u32(b, valueAt)) : 0
            if total > inline { required = max(required, Self.sum(value, total)) }
            if ifd == 0 && (tag == 256 || tag == 257) && n == 1 {
                let v = Int(type == 3 ? u16(b, valueAt) : type == 16 ? u64(b, valueAt) : u32(b, valueAt))
                if tag == 256 { width = v } else { height = v }
            }
            guard [273, 279, 324, 325].contains(tag), [3, 4, 16].contains(type), n > 0 else { continue }
            let isOffsets = tag == 273 || tag == 324
            if total > inline {
                schedule(value, .table(ifd: ifd, offsets: isOffsets, type: type, count: Int(n)))
            } else {
                let width = Int(unit)
                let values = (0..<Int(n)).map { k -> Int64 in
                    width == 2 ? u16(b, valueAt + k * 2) : width == 8 ? u64(b, valueAt + k * 8) : u32(b, valueAt + k * 4)
                }
                table(values, ifd: ifd, offsets: isOffsets)
            }
        }
        if ifd == 0, let width, let height { size = (width, height) }
        let link = big ? u64(b, count * entry) : u32(b, count * entry)
        if link != 0 && directories < FormatLimits.tiffDirectories { schedule(link, .count(ifd: ifd + 1)) }
    }

    private mutating func table(_ values: [Int64], ifd: Int, offsets isOffsets: Bool) {
        if isOffsets { offsets[ifd] = values } else { counts[ifd] = values }
        guard let starts = offsets[ifd], let lengths = counts[ifd] else { return }
        for (start, length) in zip(starts, lengths) { required = max(required, Self.sum(start, length)) }
        offsets[ifd] = nil
        counts[ifd] = nil
    }

    /// Offsets and lengths come from the body: a sum that overflows is simply "past any end".
    private static func sum(_ a: Int64, _ b: Int64) -> Int64 {
        let (value, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int64.max : value
    }

    private func u16(_ b: Bytes, _ i: Int) -> Int64 { Int64((little ? b.u16le(i) : b.u16be(i)) ?? 0) }
    private func u32(_ b: Bytes, _ i: Int) -> Int64 { Int64((little ? b.u32le(i) : b.u32be(i)) ?? 0) }
    private func u64(_ b: Bytes, _ i: Int) -> Int64 { Int64((little ? b.u64le(i) : b.u64be(i)) ?? 0) }

    func missing(length: Int64) -> String {
        if phase == .finishing || phase == .done { return "TIFF cut inside its image data (\(length) of \(required) bytes)" }
        switch current.purpose {
        case .header, .bigHeader: return "TIFF cut inside its header"
        case .count(let ifd), .entries(let ifd, _): return "TIFF cut before or inside its directory \(ifd + 1)"
        case .table(let ifd, _, _, _): return "TIFF cut inside the strip table of directory \(ifd + 1)"
        }
    }
}
