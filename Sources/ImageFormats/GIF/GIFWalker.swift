/// GIF: header and logical screen, global colour table, then blocks
/// (extensions and images, each image's data in length-prefixed sub-blocks)
/// to the `;` trailer.
struct GIFWalker: StructureWalker {
    private enum State { case header, globalTable, block, label, descriptor, localTable, codeSize, subBlockSize, subBlock, done }
    private var state = State.header
    private var images = 0
    private var inImage = false

    mutating func start() -> WalkStep { .need(13) }

    mutating func advance(_ bytes: Bytes, at offset: Int64, crc: UInt32) -> WalkStep {
        switch state {
        case .header:
            guard bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8)),
                  let flags = bytes.at(10) else { return .failed("not a GIF header") }
            state = .globalTable
            return .skip(flags & 0x80 != 0 ? Int64(3 << ((flags & 7) + 1)) : 0, crcSeed: nil)
        case .globalTable:
            return nextBlock()
        case .block:
            switch bytes.at(0) {
            case 0x21: state = .label; return .need(1)
            case 0x2C: state = .descriptor; images += 1; return .need(9)
            case 0x3B: state = .done; return .end
            default: return .failed("GIF has an unknown block (0x\(String(bytes.at(0) ?? 0, radix: 16))) after \(images) images")
            }
        case .label:
            state = .subBlockSize
            return .need(1)
        case .descriptor:
            state = .localTable
            let flags = bytes.at(8) ?? 0
            return .skip(flags & 0x80 != 0 ? Int64(3 << ((flags & 7) + 1)) : 0, crcSeed: nil)
        case .localTable:
            state = .codeSize
            return .need(1)
        case .codeSize:
            state = .subBlockSize
            inImage = true
            return .need(1)
        case .subBlockSize:
            if bytes.at(0) == 0 { return nextBlock() }   // the block terminator
            state = .subBlock
            return .skip(Int64(bytes.at(0) ?? 0), crcSeed: nil)
        case .subBlock:
            state = .subBlockSize
            return .need(1)
        case .done:
            return .end
        }
    }

    private mutating func nextBlock() -> WalkStep {
        state = .block
        inImage = false
        return .need(1)
    }

    func missing(length: Int64) -> String {
        switch state {
        case .header: return "GIF cut inside its header"
        case .globalTable: return "GIF cut inside its colour table"
        case .block: return "GIF cut before its trailer (after \(images) images)"
        case .descriptor, .localTable, .codeSize: return "GIF cut inside the header of image \(images)"
        case .label, .subBlockSize, .subBlock:
            return inImage ? "GIF cut inside the data of image \(images)" : "GIF cut inside an extension block"
        case .done: return ""
        }
    }
}
