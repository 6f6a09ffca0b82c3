import CCurl
import Testing

/// The executable's `curl_strequal`, `curl_strnequal`, `curl_msnprintf` and
/// `curl_maprintf` (CCurl.c) take the place of libcurl's own for libcurl
/// itself: every response header it reads, every request field it looks for,
/// the request's `Host` line and the connection cache's keys go through them.
/// They must answer exactly as libcurl's do: for every byte (only ASCII
/// letters fold, with no locale), every length and NULL; every format, and
/// every size of buffer. Its `sscanf` reads libcurl's status line.
@Suite struct CurlStringCompareTests {
    private static func libcurlLoaded() -> Bool { ccurl_global_init() == CURLE_OK }

    /// Every pair of bytes (1...255), alone and before a common tail, both ways round.
    @Test func everyPairOfBytesComparesAsInLibcurl() throws {
        try #require(Self.libcurlLoaded())
        var mismatches: [String] = []
        for a in 1...255 {
            for b in 1...255 {
                for tail in ["", "x", "X-1"] {
                    let first = [CChar(bitPattern: UInt8(a))] + tail.utf8.map { CChar(bitPattern: $0) } + [0]
                    let second = [CChar(bitPattern: UInt8(b))] + tail.utf8.map { CChar(bitPattern: $0) } + [0]
                    let ours = curl_strequal(first, second)
                    let theirs = ccurl_libcurl_strequal(first, second)
                    for max in [0, 1, 2, 10] {
                        if curl_strnequal(first, second, max) != ccurl_libcurl_strnequal(first, second, max) {
                            mismatches.append("strnequal(\(a), \(b), \(tail), \(max))")
                        }
                    }
                    if ours != theirs { mismatches.append("strequal(\(a), \(b), \(tail))") }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
    }

    /// Strings of different lengths, prefixes, `max` past either end, and NULL pointers.
    @Test func lengthsPrefixesAndNullCompareAsInLibcurl() throws {
        try #require(Self.libcurlLoaded())
        let words = ["", "a", "A", "content-length:", "Content-Length: 5", "CONTENT-LENGTH:", "Content-Type:",
                     "Host:", "host", "hOsT:x", "Transfer-Encoding: chunked", "\u{e9}t\u{e9}", "\u{c9}T\u{c9}",
                     "http", "HTTP", "https", "Location:", "location: /x", "[", "{", "@", "`"]
        var mismatches: [String] = []
        for first in words {
            for second in words {
                if curl_strequal(first, second) != ccurl_libcurl_strequal(first, second) {
                    mismatches.append("strequal(\(first), \(second))")
                }
                for max in 0...20 where curl_strnequal(first, second, max) != ccurl_libcurl_strnequal(first, second, max) {
                    mismatches.append("strnequal(\(first), \(second), \(max))")
                }
            }
            for max in [0, 1, 5] {
                if curl_strnequal(first, nil, max) != ccurl_libcurl_strnequal(first, nil, max) { mismatches.append("nil 2nd \(max)") }
                if curl_strnequal(nil, first, max) != ccurl_libcurl_strnequal(nil, first, max) { mismatches.append("nil 1st \(max)") }
            }
            if curl_strequal(first, nil) != ccurl_libcurl_strequal(first, nil) { mismatches.append("strequal nil") }
        }
        for max in [0, 1, 5] where curl_strnequal(nil, nil, max) != ccurl_libcurl_strnequal(nil, nil, max) {
            mismatches.append("strnequal(nil, nil, \(max))")
        }
        #expect(curl_strequal(nil, nil) == ccurl_libcurl_strequal(nil, nil))
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
    }

    /// The formats libcurl writes on every transfer, at their limits, and the ones
    /// left to libcurl's engine (flags, widths, "%%", NULL, output past 512 bytes).
    @Test func formatsAreWrittenAsLibcurlWritesThem() {
        #expect(ccurl_printf_mismatches() == 0)
    }

    /// The executable's `sscanf` reads libcurl's status line (`" HTTP/%1d.%1d%c%3d%c"`) as
    /// glibc's does: usual lines, every byte of one changed, the line cut at every length; and
    /// leaves another format to glibc's.
    @Test func theStatusLineIsReadAsGlibcReadsIt() {
        #expect(ccurl_sscanf_mismatches() == 0)
    }
}
