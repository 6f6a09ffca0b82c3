import Fetch
import Testing

@Suite struct HTTPDateTests {
    @Test func httpDates() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == 784_111_777)
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.parse("0") == nil)
        #expect(HTTPDate.parse("yesterday") == nil)
    }
}

@Suite struct HTTPDateFastPathTests {
    /// The byte-level IMF-fixdate reader agrees with the general parser
    /// (timegm) on dates across four centuries, leap days included.
    @Test func fixdateAgreesWithTheGeneralParser() {
        var seconds = -2_208_988_800.0   // 1900-01-01
        while seconds < 32_503_680_000 {  // 3000-01-01
            let text = HTTPDate.format(seconds)
            #expect(HTTPDate.parse(text) == seconds, "\(text)")
            seconds += 86_400 * 37 + 3_601   // a prime-ish stride through days and hours
        }
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 23:59:59 GMT") == 1_709_251_199)
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 23:59:59 UTC") == nil || HTTPDate.parse("Thu, 29 Feb 2024 23:59:59 UTC") == 1_709_251_199)
        #expect(HTTPDate.parse("Thu, 2x Feb 2024 23:59:59 GMT") == nil)
        #expect(HTTPDate.parse("Thu, 29 Fex 2024 23:59:59 GMT") == nil)
    }

    /// The fixed-offset reader checks every byte: any one replaced by a
    /// letter, or by the bytes just below "0" and just above "9", is not a date.
    @Test func everyByteOfAFixdateIsChecked() {
        let valid = Array("Sun, 06 Nov 1994 08:49:37 GMT".utf8)
        #expect(HTTPDate.parse(String(decoding: valid, as: UTF8.self)) == 784_111_777)
        for i in valid.indices {
            for wrong: UInt8 in [0x78, 0x2F, 0x3A] where wrong != valid[i] {
                var bytes = valid
                bytes[i] = wrong
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(HTTPDate.parse(text) == nil, "\(text)")
            }
        }
        for day in ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"] {
            #expect(HTTPDate.parse("\(day), 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        // The first of each month of 2001, in Unix seconds (Python's calendar.timegm).
        let firsts: [Double] = [978_307_200, 980_985_600, 983_404_800, 986_083_200, 988_675_200, 991_353_600, 993_945_600, 996_624_000, 999_302_400, 1_001_894_400, 1_004_572_800, 1_007_164_800]
        for (i, month) in months.enumerated() {
            #expect(HTTPDate.parse("Sun, 01 \(month) 2001 00:00:00 GMT") == firsts[i])
            #expect(HTTPDate.parse("Sun, 01 \(month.lowercased()) 2001 00:00:00 GMT") == nil, "names are case-sensitive")
        }
    }

    /// The word-at-a-time IMF-fixdate reader against the asctime reader (a
    /// byte at a time) on the same fields: every byte of a date replaced by
    /// every value reads as the asctime date with those bytes, or is not a
    /// date where the byte is a separator or "GMT" (or a space for the
    /// day's first digit, which only asctime allows).
    @Test func everyValueAtEveryPlaceReadsAsTheSameAsctimeDate() {
        let separators: Set<Int> = [3, 4, 7, 11, 16, 19, 22, 25, 26, 27, 28]
        for date in ["Sun, 06 Nov 1994 08:49:37 GMT", "Thu, 29 Feb 2024 23:59:59 GMT", "Mon, 30 Jun 2025 00:00:60 GMT",
                     "Sat, 31 Dec 9999 23:59:59 GMT", "Wed, 01 Jan 1900 00:00:00 GMT"] {
            let valid = Array(date.utf8)
            for i in valid.indices {
                for value in UInt8.min...UInt8.max {
                    var bytes = valid
                    bytes[i] = value
                    let fixdate = bytes.withUnsafeBufferPointer { HTTPDate.parse(utf8: $0) }
                    if value == valid[i] {
                        #expect(fixdate != nil, "\(date)")
                    } else if separators.contains(i) || (i == 5 && value == 0x20) {
                        #expect(fixdate == nil, "\(date): byte \(i) = \(value)")
                    } else {
                        // "Sun Nov 06 08:49:37 1994"
                        let asctime = Array(bytes[0..<3]) + [0x20] + Array(bytes[8..<11]) + [0x20] + Array(bytes[5..<7]) + [0x20]
                            + Array(bytes[17..<25]) + [0x20] + Array(bytes[12..<16])
                        let expected = asctime.withUnsafeBufferPointer { HTTPDate.parse(utf8: $0) }
                        #expect(fixdate == expected, "\(date): byte \(i) = \(value)")
                    }
                }
            }
        }
    }
}
