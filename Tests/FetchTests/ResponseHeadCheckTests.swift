@testable import Fetch
import Testing

/// The header callback's check, line by line (issue 14 items 2 and 3).
@Suite struct ResponseHeadCheckTests {
    /// Feeds `block` line by line; the last verdict and the check.
    static func feed(_ block: String) -> (ResponseHeadCheck, [ResponseHeadCheck.Line]) {
        var check = ResponseHeadCheck()
        var verdicts: [ResponseHeadCheck.Line] = []
        var line: [UInt8] = []
        for byte in Array(block.utf8) {
            line.append(byte)
            if byte == 0x0A {
                verdicts.append(line.withUnsafeBytes { check.accept($0) })
                line = []
            }
        }
        if !line.isEmpty { verdicts.append(line.withUnsafeBytes { check.accept($0) }) }
        return (check, verdicts)
    }

    @Test func wholeResponsesPass() {
        for block in ["HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "HTTP/2 200 \r\ncontent-length: 0\r\n\r\n",
                      "HTTP/1.0 404\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 7, 7\r\nContent-Length: 007\r\n\r\n",
                      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 302 Found\r\nLocation: /x\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"] {
            let (check, verdicts) = Self.feed(block)
            #expect(check.isComplete && check.problem == nil && !verdicts.contains(.malformed), "\(block)")
        }
    }

    @Test func aBlockWithoutItsBlankLineIsIncomplete() {
        #expect(!Self.feed("HTTP/1.1 200 OK\r\n").0.isComplete)
        #expect(!Self.feed("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n").0.isComplete)
        #expect(!ResponseHeadCheck().isComplete)
    }

    @Test func everyInvalidContentLengthIsMalformed() {
        for value in ["5abc", "1e3", "5.5", "0x10", "5, 74", "+5", "-5", "", " ", "5 5", ",5", "5,", "１"] {
            let (check, verdicts) = Self.feed("HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n\r\n")
            #expect(verdicts.last == .malformed && check.problem?.hasPrefix("invalid Content-Length") == true, "\(value)")
        }
        #expect(Self.feed("HTTP/1.1 200 OK\r\nContent-Length: 5\r\ncontent-length: 6\r\n\r\n").0.problem
                == "two different Content-Length values")
        #expect(Self.feed("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n").0.problem
                == "Content-Length \"99999999999999999999\" is out of range")
    }

    /// The two fields are read whatever their case and spacing; a name that
    /// only starts like one of them, or has a space before its colon, is another field.
    @Test func theTwoFieldsAreReadInEveryForm() {
        let lengths: [(String, Int64?)] = [
            ("Content-Length: 12420", 12420), ("CONTENT-LENGTH:12420", 12420), ("content-length: \t 7 \t", 7),
            ("Content-Length: 000000000000000000012", 12), ("Content-Length: 999999999999999999", 999_999_999_999_999_999),
            ("Content-Length: 0", 0), ("Content-Length : 5", nil), ("Content-Lengths: 5", nil), ("Content-Type: 5", nil),
            ("Connection: keep-alive", nil), ("c: 5", nil), ("Content-Lengt: 5", nil), ("Content_Length: 5", nil),
        ]
        for (line, expected) in lengths {
            let (check, verdicts) = Self.feed("HTTP/1.1 200 OK\r\n\(line)\r\n\r\n")
            #expect(check.isComplete && !verdicts.contains(.malformed), "\(line)")
            #expect(check.contentLength == expected, "\(line)")
        }
        #expect(Self.feed("HTTP/1.1 200 OK\r\nContent-Length: 1000000000000000000\r\n\r\n").0.problem
                == "Content-Length \"1000000000000000000\" is out of range")
        let (coded, _) = Self.feed("HTTP/1.1 200 OK\r\nCONTENT-ENCODING:  gzip \r\ncontent-encoding:br\r\nContent-Encodings: x\r\n\r\n")
        #expect(coded.contentEncoding == "gzip, br")
        #expect(Self.feed("HTTP/1.1 200 OK\r\nContent-Encoding : gzip\r\n\r\n").0.contentEncoding == nil)
    }

    @Test func malformedStatusLinesAreRefused() {
        for line in ["HTTP/1.1 2000 OK", "HTTP/1.2 200 OK", "ICY 200 OK", "HTTP/1.1 20 OK", "HTTP/1.1 099 x",
                     "HTTP/1.1 600 x", "HTTP/1.1 200OK", "hello", "\u{0}\u{1}"] {
            let (check, verdicts) = Self.feed(line + "\r\n\r\n")
            #expect(verdicts.first == .malformed, "\(line)")
            #expect(check.problem?.hasPrefix("invalid status line") == true, "\(line)")
        }
    }

    /// Trailers of a chunked body come after the final response's blank line:
    /// they are neither a new response nor malformed.
    @Test func trailersAreNotANewResponse() {
        let (check, verdicts) = Self.feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nX-Checksum: 1\r\n\r\n")
        #expect(verdicts.suffix(2) == [.trailer, .trailer])
        #expect(check.isComplete && check.status == 200)
    }
}

/// A redirect chain resumed by asyncfetch (issue 14 item 4) sends what
/// libcurl would have sent: no `Authorization` or `Cookie` to another host.
@Suite struct ResumedRedirectHeaderTests {
    static let lines = ["Authorization: Bearer x", "cookie: a=b", "X-Other: 1"]

    @Test func anotherHostGetsNoCredentials() {
        #expect(FetchClient.linesForRedirect(Self.lines, from: "http://a.example/x", to: "http://b.example/y") == ["X-Other: 1"])
        #expect(FetchClient.linesForRedirect(Self.lines, from: "http://a.example/x", to: "http://a.example:8080/y") == ["X-Other: 1"])
        #expect(FetchClient.linesForRedirect(Self.lines, from: "http://a.example/x", to: "https://a.example/y") == ["X-Other: 1"])
    }

    @Test func theSameHostKeepsThem() {
        #expect(FetchClient.linesForRedirect(Self.lines, from: "http://A.example/x", to: "http://a.example/y?z") == Self.lines)
    }
}
