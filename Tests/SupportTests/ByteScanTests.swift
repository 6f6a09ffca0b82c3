import Support
import Testing

/// The eight-bytes-at-a-time scan against a byte loop: every byte value, at
/// every place of a word and of the tail, for both sets the lines ask for.
@Suite struct ByteScanTests {
    static func loop(_ bytes: [UInt8], below limit: UInt8, _ set: [UInt8]) -> Bool {
        bytes.contains { $0 < limit || set.contains($0) }
    }

    @Test func findsEveryByteOfTheSetAndNothingElse() {
        for (limit, set) in [(UInt8(0x20), [UInt8(0x7F), 0xC2, 0xC2]), (0x20, [0x22, 0x5C, 0x7F]), (0x80, [0x00, 0x00, 0x00])] {
            for length in [1, 7, 8, 9, 16, 19] {
                for place in 0..<length {
                    for value in 0...255 {
                        var bytes = [UInt8](repeating: 0x61, count: length)   // a
                        bytes[place] = UInt8(value)
                        let found = bytes.withUnsafeBufferPointer {
                            ByteScan.contains(below: limit, or: set[0], set[1], set[2], in: $0)
                        }
                        #expect(found == Self.loop(bytes, below: limit, set), "\(value) at \(place) of \(length)")
                    }
                }
            }
        }
        #expect(!ByteScan.contains(below: 0x20, or: 0x7F, 0xC2, 0xC2, in: UnsafeBufferPointer(start: nil, count: 0)))
    }

    /// Bytes just beside the set's, in every lane at once (a borrow from one
    /// lane into the next must not make or hide a match).
    @Test func neighboursOfTheSetAreNotFound() {
        for value: UInt8 in [0x20, 0x21, 0x7E, 0x80, 0xC1, 0xC3, 0xFF] {
            let bytes = [UInt8](repeating: value, count: 16)
            #expect(!bytes.withUnsafeBufferPointer { ByteScan.contains(below: 0x20, or: 0x7F, 0xC2, 0xC2, in: $0) }, "\(value)")
        }
        var mixed = [UInt8](repeating: 0xFF, count: 16)
        mixed[9] = 0x1F
        #expect(mixed.withUnsafeBufferPointer { ByteScan.contains(below: 0x20, or: 0x7F, 0xC2, 0xC2, in: $0) })
    }
}
