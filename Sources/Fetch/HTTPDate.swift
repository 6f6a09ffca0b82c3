#if canImport(Glibc)
import Glibc
import Support
#elseif canImport(Darwin)
import Darwin
#endif

/// HTTP dates (RFC 9110 §5.6.7) as Unix seconds, read by the grammar and
/// nothing looser:
///
/// ```
/// IMF-fixdate  = day-name "," SP 2DIGIT SP month SP 4DIGIT SP time-of-day SP "GMT"
/// rfc850-date  = day-name-l "," SP 2DIGIT "-" month "-" 2DIGIT SP time-of-day SP "GMT"
/// asctime-date = day-name SP month SP ( 2DIGIT / SP DIGIT ) SP time-of-day SP 4DIGIT
/// time-of-day  = 2DIGIT ":" 2DIGIT ":" 2DIGIT
/// ```
///
/// The grammar is case-sensitive ("Sun", "Nov", "GMT"), has single spaces
/// only, and the day must exist in its month. So "UTC" for "GMT", a 2-digit
/// year in the first form, a missing comma, doubled spaces, dashes in the
/// first form, periods in the time and a 1-digit hour are all invalid: nil,
/// which callers treat as RFC 9111 says (an invalid `Expires` is in the
/// past). The day name is not checked against the date (§5.6.7 calls it
/// redundant). Years before 1900 are refused too (no HTTP date is that old).
public enum HTTPDate {
    /// The first and last seconds `format` prints: 1900-01-01 00:00:00 and
    /// 9999-12-31 23:59:59. A leap second after the last ("23:59:60") reads
    /// as it, so every parsed date prints and reads back the same (found by
    /// the `httpdate` fuzz target).
    static let earliest: Double = -2_208_988_800
    static let latest: Double = 253_402_300_799

    public static func parse(_ text: String) -> Double? {
        // Borrowed bytes for a native or small string (no copy of `text`).
        if let parsed = text.utf8.withContiguousStorageIfAvailable({ parse(utf8: $0) }) { return parsed }
        var text = text
        return text.withUTF8 { parse(utf8: $0) }
    }

    /// `parse` of a value's UTF-8 bytes (a stored header read in place:
    /// `CacheMetadata.Header.withValueBytes`).
    public static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        let reader = HTTPDateReader(bytes)
        return (reader.imfFixdate() ?? reader.rfc850Date() ?? reader.asctimeDate()).map { min($0, latest) }
    }

    /// Unix seconds of a civil date and time (UTC), or nil when the fields
    /// name no real moment (a day the month lacks, hour 24, minute 60…).
    /// Days from the civil date by Howard Hinnant's algorithm.
    static func seconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Double? {
        guard year >= 1900, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 60 else { return nil }
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second)
    }

    /// Days in `month` (1…12) of `year` (no array per call: every cache hit parses a date or two).
    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// RFC 9110 §5.6.7: a two-digit year (rfc850-date) that would lie more
    /// than 50 years in the future is the most recent past year with those digits.
    public static func fullYear(twoDigit: Int, now: Double = currentUnixTime()) -> Int {
        let thisYear = 1970 + Int(now / 31_556_952)   // mean Gregorian year: off by a day at most
        var year = thisYear - thisYear % 100 + twoDigit
        if year > thisYear + 50 { year -= 100 }
        return year
    }

    /// IMF-fixdate for Unix seconds, clamped to the years `parse` reads (a
    /// stored time from a damaged or hostile record never traps).
    public static func format(_ seconds: Double) -> String {
        var time = time_t(seconds.isNaN ? 0 : min(max(seconds, earliest), latest))
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(monthNames[Int(parts.tm_mon)]) \(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
