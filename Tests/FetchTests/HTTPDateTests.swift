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
}
