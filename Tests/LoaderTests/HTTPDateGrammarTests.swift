import Fetch
import Testing

/// RFC 9110 §5.6.7: the three date forms, exactly, and the malformed dates
/// of the cache-tests suite's `Expires` family (all invalid).
@Suite struct HTTPDateGrammarTests {
    static let moment = 2_544_400_878.0   // Thu, 18 Aug 2050 02:01:18 GMT

    @Test func theThreeFormsOfRFC9110() {
        #expect(HTTPDate.parse("Thu, 18 Aug 2050 02:01:18 GMT") == Self.moment)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == 784_111_777)
        #expect(HTTPDate.parse("Sun Nov 16 08:49:37 1994") == Double(784_111_777 + 10 * 86_400))
        #expect(HTTPDate.parse("Wednesday, 09-Nov-94 08:49:37 GMT") == Double(784_111_777 + 3 * 86_400))
        // A leap second and a leap day are dates; the day name is not checked against the date.
        #expect(HTTPDate.parse("Sat, 31 Dec 2016 23:59:60 GMT") == 1_483_228_800)
        #expect(HTTPDate.parse("Mon, 29 Feb 2024 00:00:00 GMT") == 1_709_164_800)
    }

    @Test(arguments: [
        "Thu, 18 Aug 2050 02:01:18 UTC",      // UTC for GMT
        "Thu, 18 Aug 50 02:01:18 GMT",        // 2-digit year in the IMF form
        "Thu 18 Aug 2050 02:01:18 GMT",       // missing comma
        "Thu, 18  Aug  2050 02:01:18 GMT",    // extra spaces
        "Thu, 18-Aug-2050 02:01:18 GMT",      // dashes in the IMF form
        "Thu, 18 Aug 2050 02.01.18 GMT",      // periods in the time
        "Thu, 18 Aug 2050 2:01:18 GMT",       // 1-digit hour
        "THU, 18 Aug 2050 02:01:18 GMT",      // the grammar is case-sensitive
        "Thu, 18 AUG 2050 02:01:18 GMT",
        "Thu, 18 Aug 2050 02:01:18 gMT",
        "Thu, 8 Aug 2050 02:01:18 GMT",       // 1-digit day in the IMF form
        "Thu, 18 Aug 2050 02:01:18 GMT ",     // trailing space (field values arrive trimmed)
        "Thu, 18 Aug 2050 02:01:18 +0000",
        "Thu, 31 Feb 2050 02:01:18 GMT",      // no such day
        "Thu, 29 Feb 2023 02:01:18 GMT",
        "Thu, 18 Aug 2050 24:00:00 GMT",
        "Thu, 18 Aug 2050 02:60:00 GMT",
        "Thu, 18 Aug 2050 02:01:61 GMT",
        "Thursday, 18 Aug 2050 02:01:18 GMT", // long day name in the IMF form
        "Thu, 18-Aug-50 02:01:18 GMT",        // short day name in the RFC 850 form
        "Thursday, 18-Aug-2050 02:01:18 GMT", // 4-digit year in the RFC 850 form
        "Thursday, 18-Aug-50 02:01:18 UTC",
        "Thu Aug 18 02:01:18 50",             // 2-digit year in asctime
        "Thu Aug 8 02:01:18 2050",            // asctime's 1-digit day needs its space
        "Thu Aug 18 02:01:18 2050 GMT",
        "0", "-1", "", "yesterday", "2050-08-18T02:01:18Z",
    ])
    func malformedDatesAreInvalid(_ text: String) {
        #expect(HTTPDate.parse(text) == nil, "\(text)")
    }

    /// §5.6.7: a 2-digit year more than 50 years ahead is in the past century.
    @Test func twoDigitYearsOfRFC850() {
        let now = 1_795_000_000.0   // 2026
        #expect(HTTPDate.fullYear(twoDigit: 26, now: now) == 2026)
        #expect(HTTPDate.fullYear(twoDigit: 76, now: now) == 2076)
        #expect(HTTPDate.fullYear(twoDigit: 77, now: now) == 1977)
        #expect(HTTPDate.fullYear(twoDigit: 94, now: now) == 1994)
        #expect(HTTPDate.fullYear(twoDigit: 0, now: now) == 2000)
    }
}
