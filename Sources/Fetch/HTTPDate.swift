#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// HTTP dates (RFC 9110 §5.6.7) as Unix seconds: IMF-fixdate
/// ("Sun, 06 Nov 1994 08:49:37 GMT") and the two obsolete forms a recipient
/// must accept (RFC 850 and asctime). Anything else is nil, which callers
/// treat as "in the past" where RFC 9111 says so.
public enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The last second `format` prints: 9999-12-31 23:59:59. A leap second
    /// after it ("23:59:60") reads as this one, so that every parsed date prints
    /// and reads back the same (found by the `httpdate` fuzz target).
    static let latest: Double = 253_402_300_799

    public static func parse(_ text: String) -> Double? {
        parseAnyForm(text).map { min($0, latest) }
    }

    private static func parseAnyForm(_ text: String) -> Double? {
        if let fixed = parseIMFFixdate(text) { return fixed }
        // Tokenise on spaces, commas, dashes and colons.
        var tokens: [Substring] = []
        var current = text.utf8.startIndex
        var start = current
        let utf8 = text.utf8
        while current < utf8.endIndex {
            let c = utf8[current]
            if c == 0x20 || c == 0x2C || c == 0x2D || c == 0x3A || c == 0x09 {
                if start < current { tokens.append(Substring(text[start..<current])) }
                start = utf8.index(after: current)
            }
            current = utf8.index(after: current)
        }
        if start < utf8.endIndex { tokens.append(Substring(text[start...])) }
        // IMF: Sun 06 Nov 1994 08 49 37 GMT ; RFC850: Sunday 06 Nov 94 08 49 37 GMT
        // asctime: Sun Nov 6 08 49 37 1994
        guard tokens.count >= 7 else { return nil }
        var day: Int?, month: Int?, year: Int?, hour: Int?, minute: Int?, second: Int?
        if let m = monthIndex(tokens[1]) {
            month = m; day = Int(tokens[2]); hour = Int(tokens[3]); minute = Int(tokens[4])
            second = Int(tokens[5]); year = Int(tokens[6])
        } else if tokens.count >= 8, let m = monthIndex(tokens[2]) {
            guard tokens[7].uppercased() == "GMT" || tokens[7].uppercased() == "UTC" else { return nil }
            month = m; day = Int(tokens[1]); year = Int(tokens[3]); hour = Int(tokens[4])
            minute = Int(tokens[5]); second = Int(tokens[6])
        }
        guard let day, let month, var year, let hour, let minute, let second,
              (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        if year < 100 { year += year < 70 ? 2000 : 1900 }
        guard (1900...9999).contains(year) else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        return seconds == -1 ? nil : Double(seconds)
    }

    /// The preferred form, "Sun, 06 Nov 1994 08:49:37 GMT", read straight
    /// from its 29 bytes: every cache hit parses a `Date`. Nil when the text
    /// is not exactly that form (the general parser then tries).
    static func parseIMFFixdate(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { b -> Double? in
            guard b.count == 29, b[3] == 0x2C, b[4] == 0x20, b[7] == 0x20, b[11] == 0x20, b[16] == 0x20,
                  b[19] == 0x3A, b[22] == 0x3A, b[25] == 0x20, b[26] == 0x47, b[27] == 0x4D, b[28] == 0x54 else { return nil }
            func digits(_ at: Int, _ count: Int) -> Int? {
                var value = 0
                for i in at..<at + count {
                    let d = Int(b[i]) - 48
                    guard d >= 0 && d <= 9 else { return nil }
                    value = value * 10 + d
                }
                return value
            }
            let m0 = b[8] | 0x20, m1 = b[9] | 0x20, m2 = b[10] | 0x20
            var month = -1
            for (index, name) in monthBytes.enumerated() where name.0 == m0 && name.1 == m1 && name.2 == m2 {
                month = index + 1
                break
            }
            guard month > 0, let day = digits(5, 2), let year = digits(12, 4), let hour = digits(17, 2),
                  let minute = digits(20, 2), let second = digits(23, 2),
                  (1...31).contains(day), hour <= 23, minute <= 59, second <= 60, year >= 1900 else { return nil }
            // Days from the civil date (Howard Hinnant's algorithm), then seconds.
            let y = month <= 2 ? year - 1 : year
            let era = y / 400
            let yoe = y - era * 400
            let mp = (month + 9) % 12
            let doy = (153 * mp + 2) / 5 + day - 1
            let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
            let days = era * 146_097 + doe - 719_468
            return Double(days * 86_400 + hour * 3600 + minute * 60 + second)
        }
    }

    private static let monthBytes: [(UInt8, UInt8, UInt8)] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        .map { let u = Array($0.utf8); return (u[0], u[1], u[2]) }

    /// IMF-fixdate for Unix seconds.
    /// A time outside 1900–9999 (what `parse` accepts; NaN is 1970) prints as the nearest end of
    /// that range: stored times are read back from disk, where anything can be.
    public static func format(_ seconds: Double) -> String {
        var time = time_t(seconds.isNaN ? 0 : min(max(seconds, -2_208_988_800), latest))
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(monthNames[Int(parts.tm_mon)]) \(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    private static func monthIndex(_ token: Substring) -> Int? {
        guard token.count == 3 else { return nil }
        return months.firstIndex(of: token.lowercased())
    }
}

/// Seconds since the Unix epoch, from the system clock.
/// Unix seconds, in whole microseconds: times stored in cache metadata then
/// print in at most 16 digits, which the metadata decoder reads back exactly
/// without `strtod` (every hit reads three of them).
public func currentUnixTime() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec / 1000)) / 1e6
}

/// Seconds from an arbitrary start, never going backwards (for durations).
public func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// The string without leading and trailing spaces and tabs.
public func trimWhitespace<S: StringProtocol>(_ text: S) -> String {
    // Spaces and tabs are ASCII, so trimming works on the UTF-8 bytes; the
    // common case (nothing to trim) copies the text once.
    let substring = Substring(text)
    let utf8 = substring.utf8
    var start = utf8.startIndex
    var end = utf8.endIndex
    while start < end, utf8[start] == 0x20 || utf8[start] == 0x09 { start = utf8.index(after: start) }
    while end > start {
        let before = utf8.index(before: end)
        guard utf8[before] == 0x20 || utf8[before] == 0x09 else { break }
        end = before
    }
    return String(substring[start..<end])
}
