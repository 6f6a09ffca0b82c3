import Support
import Testing

/// Bytes that are not UTF-8 become `%XX`, never U+FFFD (a URL of a list or an argument).
@Suite struct PercentEncodedTextTests {
    @Test(arguments: [
        ([0x61, 0xFF, 0x62], "a%FFb"),                        // a byte no UTF-8 sequence starts with
        (Array("café".utf8), "café"),                         // valid UTF-8 is kept as it is
        ([0x63, 0x61, 0x66, 0xE9], "caf%E9"),                 // Latin-1 é
        ([0xC0, 0xAF], "%C0%AF"),                             // an overlong '/'
        ([0xED, 0xA0, 0x80], "%ED%A0%80"),                    // a surrogate
        ([0xE2, 0x82], "%E2%82"),                             // cut short at the end
        ([0xE2, 0x82, 0xAC, 0x80], "€%80"),                   // a stray continuation after a whole '€'
        ([0xF4, 0x90, 0x80, 0x80], "%F4%90%80%80"),           // above U+10FFFF
        ([0xF0, 0x9F, 0x98, 0x80, 0x25, 0x46, 0x46], "😀%FF"), // a typed "%FF" stays
    ] as [([UInt8], String)])
    func encodesOnlyTheBytesThatAreNotUTF8(bytes: [UInt8], expected: String) {
        #expect(bytes.withUnsafeBufferPointer { textPercentEncodingInvalidUTF8($0) } == expected)
    }
}
