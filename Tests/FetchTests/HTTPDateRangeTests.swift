import Fetch
import Testing

/// Times read back from stored metadata can be anything a `Double` holds
/// (the metadata round-trips `1e22` exactly); printing one never traps
/// (issue 14 item 1). `cache list` guards its own timestamps the same way.
@Suite struct HTTPDateRangeTests {
    @Test(arguments: [1e22, -1e22, 9.3e18, Double.greatestFiniteMagnitude, -Double.greatestFiniteMagnitude,
                      Double.infinity, -Double.infinity, Double.nan])
    func timesNoClockReachesPrintAtTheEndOfTheRange(seconds: Double) {
        let printed = HTTPDate.format(seconds)
        let end = seconds.isNaN ? "Thu, 01 Jan 1970 00:00:00 GMT"
            : seconds > 0 ? "Fri, 31 Dec 9999 23:59:59 GMT" : "Mon, 01 Jan 1900 00:00:00 GMT"
        #expect(printed == end, "\(seconds) -> \(printed)")
    }

    /// Found by the `httpdate` fuzz target: the leap second that ends year 9999
    /// parsed to a time `format` cannot print, so it did not read back.
    @Test func theLastLeapSecondReadsAsTheLastSecond() {
        for text in ["Fri, 31 Dec 9999 23:59:60 GMT", "Friday, 31-Dec-99 23:59:60 GMT", "Fri Dec 31 23:59:60 9999"] {
            guard let seconds = HTTPDate.parse(text) else { continue }   // RFC 850's two-digit year is 1999
            #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds, "\(text)")
        }
        #expect(HTTPDate.parse("Fri, 31 Dec 9999 23:59:60 GMT") == 253_402_300_799)
    }

    @Test func ordinaryTimesPrintAsIMFFixdate() {
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.parse(HTTPDate.format(253_402_300_799)) == 253_402_300_799)
    }
}
