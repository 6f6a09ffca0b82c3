import Fetch
import Foundation
import Testing
import TestSupport

/// Real nginx: plain HTTP, and HTTPS with a self-signed certificate where
/// HTTP/2 is negotiated by ALPN.
@Suite(.timeLimit(.minutes(3))) struct NginxSmokeTests {
    @Test func plainHTTPFromNginx() async throws {
        let nginx = try NginxServer(root: Paths.fixtures)
        let temp = try TempDirectory()
        let sink = try FileSink(path: temp.file("a"))
        let response = try await FetchClient().fetch(FetchRequest(url: nginx.url("/images/red-64x48.png")), into: sink)
        #expect(response.status == 200)
        #expect(response.headers["ETag"] != nil && response.headers["Last-Modified"] != nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: temp.file("a")))
                == Data(contentsOf: URL(fileURLWithPath: Paths.fixtures + "/images/red-64x48.png")))
    }

    @Test func selfSignedTLSFailsByDefaultAndWorksWithCacertOverHTTP2() async throws {
        let nginx = try NginxServer(root: Paths.fixtures, tls: true)
        let temp = try TempDirectory()
        var strict = FetchConfiguration()
        strict.retries = 0
        do {
            let sink = try FileSink(path: temp.file("x"))
            _ = try await FetchClient(configuration: strict).fetch(FetchRequest(url: nginx.url("/images/red-64x48.png")), into: sink)
            Issue.record("a self-signed certificate must not be trusted by default")
        } catch let error as FetchError {
            #expect(error.kind == .tls)
        }
        var trusting = strict
        trusting.caFile = nginx.certificatePath
        let sink = try FileSink(path: temp.file("y"))
        let response = try await FetchClient(configuration: trusting).fetch(FetchRequest(url: nginx.url("/images/red-64x48.png")), into: sink)
        #expect(response.status == 200)
        #expect(response.httpVersion == "2")
        var insecure = strict
        insecure.insecure = true
        let sink2 = try FileSink(path: temp.file("z"))
        #expect(try await FetchClient(configuration: insecure).fetch(FetchRequest(url: nginx.url("/images/red-64x48.png")), into: sink2).status == 200)
    }
}
