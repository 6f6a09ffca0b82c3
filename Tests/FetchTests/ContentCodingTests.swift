@testable import Fetch
import Testing

/// One rule for which `Content-Encoding` values mean "nothing to undo"
/// (`ContentCoding`): the decoder and the loader's resume check both ask it.
@Suite struct ContentCodingTests {
    @Test func identityEmptyAndCaseMeanNoCodingForTheDecoderAndTheResumeCheckAlike() throws {
        let none = ["identity", "IDENTITY", " Identity ", "", " , ", "identity,,identity"]
        let coded = ["gzip", "identity, gzip", "GZIP , identity", "x-gzip", "br", "zstd", "deflate", ", br"]
        for value in none {
            #expect(!ContentCoding.isCoded([value]), "\(value.debugDescription)")
            guard case .success(nil) = ContentDecoder.make(contentEncoding: value) else {
                Issue.record("the decoder must see no coding in \(value.debugDescription)")
                continue
            }
        }
        for value in coded {
            #expect(ContentCoding.isCoded([value]), "\(value.debugDescription)")
            guard case .success(let decoder?) = ContentDecoder.make(contentEncoding: value) else {
                Issue.record("the decoder must undo \(value.debugDescription)")
                continue
            }
            _ = decoder
        }
        // Field values of several header lines: coded when any line names a coding.
        #expect(ContentCoding.isCoded(["identity", "gzip"]))
        #expect(!ContentCoding.isCoded(["identity", ""]))
        #expect(!ContentCoding.isCoded([String]()))
        // An unknown coding is a coding (not resumable), which the decoder refuses.
        #expect(ContentCoding.isCoded(["compress"]))
        guard case .failure = ContentDecoder.make(contentEncoding: "compress") else {
            Issue.record("compress is not decoded")
            return
        }
    }
}
