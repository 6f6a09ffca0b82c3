#if canImport(Glibc)
import Glibc
#endif

/// Sizes and durations as people write and read them: `153 B`, `4.2 KiB`,
/// `12.4 ms`, `1.25 s`, `2026-11-22 00:11:33` out; `64M`, `1.5G`, `90s`, `7d` in. Pure text, no
/// policy: which option takes which unit is the caller's business.
public enum HumanUnits {
    /// `153 B`, `4.2 KiB`, `1.0 MiB`: sizes for people (powers of 1024).
    public static func bytes(_ bytes: Int64) -> String {
        var text: [UInt8] = []
        appendBytes(bytes, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// `bytes(_:)` appended as UTF-8 (a result line is built as bytes).
    @inlinable
    public static func appendBytes(_ bytes: Int64, to out: inout some ByteSink) {
        if bytes < 1024 {
            appendDecimal(bytes, to: &out)
            out.append(0x20)
            out.append(0x42)   // B
            return
        }
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024 && unit < 3 { value /= 1024; unit += 1 }
        let tenths = Int64((value * 10).rounded())
        appendDecimal(tenths / 10, to: &out)
        out.append(0x2E)
        appendDecimal(tenths % 10, to: &out)
        // A literal per unit: an array of them would be allocated on every call.
        let name: StaticString = unit == 0 ? " KiB" : unit == 1 ? " MiB" : unit == 2 ? " GiB" : " TiB"
        name.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// `12.4 ms` below a second, `1.25 s` above.
    public static func duration(_ seconds: Double) -> String {
        if seconds < 1 {
            let tenths = Int((seconds * 10_000).rounded())
            return "\(tenths / 10).\(tenths % 10) ms"
        }
        let hundredths = Int((seconds * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100) s"
    }

    /// The decimal digits of `value` (a leading `-` when negative), appended
    /// without building a string.
    @inlinable
    public static func appendDecimal(_ value: Int64, to out: inout some ByteSink) {
        // Most numbers in a line (sizes in KiB, widths, heights) are short.
        if value >= 0 && value < 100 {
            if value >= 10 { out.append(UInt8(truncatingIfNeeded: 0x30 + value / 10)) }
            out.append(UInt8(truncatingIfNeeded: 0x30 + value % 10))
            return
        }
        if value < 0 { out.append(0x2D) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(0x30 + magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { out.append(buffer[index]) }
        }
    }

    /// Seconds from `30`, `0.5`, or a number with `s`, `m`, `h` or `d`
    /// (any case); nil for anything else, negative or not finite.
    public static func seconds(_ text: String) -> Double? {
        let text = text.lowercased()
        let units: [(String, Double)] = [("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        var multiplier = 1.0
        var number = Substring(text)
        if let (suffix, factor) = units.first(where: { text.hasSuffix($0.0) }) {
            multiplier = factor
            number = number.dropLast(suffix.count)
        }
        guard let value = decimal(number) else { return nil }
        return value * multiplier
    }

    /// A plain decimal number (`30`, `0.5`, `.5`, `5.`): digits and at most
    /// one point. `Double(_:)` alone also takes `0x1d` (29, and with the `d`
    /// taken for days, 1 day), `1e3`, `+5`, `nan` and `inf`: forms no one means.
    private static func decimal(_ text: Substring) -> Double? {
        var digits = 0, points = 0
        for byte in text.utf8 {
            if byte >= 0x30 && byte <= 0x39 { digits += 1 } else if byte == 0x2E { points += 1 } else { return nil }
        }
        guard digits > 0, points <= 1 else { return nil }
        return Double(text)
    }

    /// What `seconds(_:)` accepts, in words: for a message about a value
    /// it refused.
    public static let secondsForms = "give seconds (30, 0.5) or a number with s, m, h or d (90s, 5m, 1.5h, 7d)"

    /// `7d`, `90m`, `30s`, `0.5s`: the largest whole unit.
    public static func durationArgument(_ seconds: Double) -> String {
        for (unit, factor) in [("d", 86400.0), ("h", 3600.0), ("m", 60.0)] where seconds >= factor && seconds.truncatingRemainder(dividingBy: factor) == 0 {
            return "\(Int(seconds / factor))\(unit)"
        }
        return seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(seconds)s"
    }

    /// Bytes from `65536`, or a number with `K`, `M` or `G` (powers of 1024;
    /// `KB`, `KiB` too, any case); nil for anything else, beyond `Int64`, or
    /// not a whole number of bytes (`1.7`, `1.2K`: `1.5K` is 1536). A
    /// decimal that comes to whole bytes is one a `Double` holds exactly.
    public static func byteCount(_ text: String) -> Int64? {
        var text = Substring(text.uppercased())
        if text.hasSuffix("IB") {
            // Only as in KiB, MiB, GiB: "5iB" is not 5 bytes.
            guard let unit = text.dropLast(2).last, "KMG".contains(unit) else { return nil }
            text = text.dropLast(2)
        } else if text.hasSuffix("B") && text.count > 1 && !(text.dropLast().last?.isNumber ?? true) {
            text = text.dropLast()
        }
        var multiplier: Double = 1
        if let last = text.last, let factor = ["K": 1024.0, "M": 1048576.0, "G": 1073741824.0][String(last)] {
            multiplier = factor
            text = text.dropLast()
        }
        guard let value = decimal(text), value * multiplier < 9.2e18,
              value * multiplier == (value * multiplier).rounded(.down) else { return nil }
        return Int64(value * multiplier)
    }

    /// What `byteCount(_:)` accepts, in words: for a message about a value
    /// it refused.
    public static let byteCountForms = "give bytes (65536) or a number with K, M or G, powers of 1024 (512K, 64M, 1.5G), that comes to a whole number of bytes"

    /// `64M`, `512K`, `1000`: the largest whole unit.
    public static func byteCountArgument(_ bytes: Int64) -> String {
        for (unit, factor) in [("G", Int64(1) << 30), ("M", Int64(1) << 20), ("K", Int64(1) << 10)] where bytes >= factor && bytes % factor == 0 {
            return "\(bytes / factor)\(unit)"
        }
        return "\(bytes)"
    }

    /// "2026-11-22T00:11:33Z" (RFC 3339, UTC).
    public static func isoTimestamp(_ seconds: Double) -> String {
        let (date, time) = utcParts(seconds)
        return date + "T" + time + "Z"
    }

    /// "2026-11-22 00:11:33" (UTC).
    public static func humanTimestamp(_ seconds: Double) -> String {
        let (date, time) = utcParts(seconds)
        return date + " " + time
    }

    private static func utcParts(_ seconds: Double) -> (String, String) {
        guard seconds.isFinite, seconds.magnitude < 1e13 else { return ("????-??-??", "??:??:??") }
        var t = time_t(seconds.rounded(.down))
        var parts = tm()
        guard gmtime_r(&t, &parts) != nil else { return ("????-??-??", "??:??:??") }
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return ("\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))",
                "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))")
    }
}
