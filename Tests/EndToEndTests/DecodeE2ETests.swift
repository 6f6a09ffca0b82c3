import Foundation
import Testing
import TestSupport

/// `--decode` and `cache verify --decode` (issue 23 item 5), against the
/// in-process fault server: a JPEG, a WebP and a GIF with one byte flipped
/// inside their coded data (JPEG scan data, the VP8 partition, GIF LZW
/// data) pass the structure check, so without `--decode` they are stored;
/// with it the decoder refuses each and nothing of it is stored. A whole
/// image says `"checked":"decoded"`; BMP and ICO, which libvips does not
/// read, keep `"checked":"structure"`.
@Suite struct DecodeE2ETests {
    /// Fixture, byte flipped (the offsets ImageDecodingTests checks), media type.
    static let damaged: [(path: String, file: String, flip: Int, type: String)] = [
        ("/scan.jpg", "photo-120x80.jpg", 354, "image/jpeg"),
        ("/vp8.webp", "lossy-50x40.webp", 40, "image/webp"),
        ("/lzw.gif", "anim-33x17.gif", 61, "image/gif"),
    ]
    static let whole: [(path: String, file: String, type: String, checked: String)] = [
        ("/whole.jpg", "photo-120x80.jpg", "image/jpeg", "decoded"),
        ("/whole.gif", "anim-33x17.gif", "image/gif", "decoded"),
        ("/bitmap.bmp", "bitmap-30x20.bmp", "image/bmp", "structure"),
        ("/favicon.ico", "favicon-16x16.ico", "image/vnd.microsoft.icon", "structure"),
    ]

    static func server() throws -> ScriptedServer {
        let server = try ScriptedServer()
        for d in damaged {
            var bytes = ImageFixture.bytes("images/\(d.file)")
            bytes[d.flip] ^= 0xFF
            server.route(d.path, .ok(bytes, contentType: d.type))
        }
        for w in whole { server.route(w.path, .ok(ImageFixture.bytes("images/\(w.file)"), contentType: w.type)) }
        return server
    }

    static func storedKeys(_ cli: CLI) -> Set<String> {
        Set(FetchE2ETests.storedFiles(cli).compactMap { path -> String? in
            let name = path.split(separator: "/").last.map(String.init) ?? path
            let key = name.hasSuffix(".meta") ? String(name.dropLast(5)) : name
            return !path.contains("tmp") && key.count == 32 && key.allSatisfy(\.isHexDigit) ? key : nil
        })
    }

    @Test func damageInCodedDataIsStoredWithoutDecodeAndRefusedWithIt() async throws {
        let server = try Self.server()
        let urls = Self.damaged.map { server.url($0.path) } + Self.whole.map { server.url($0.path) }

        let plain = try CLI()
        let stored = try await plain.runOffPool(["--json", "--retries", "0"] + urls)
        #expect(stored.signal == nil && stored.status == 0, "status \(stored.status): \(stored.stderr)")
        for url in urls {
            let line = try #require(FetchE2ETests.terminal(stored, url), "\(url): \(stored.stdout)")
            #expect(line["phase"] as? String == "success" && line["checked"] as? String == "structure", "\(url): \(line)")
        }
        #expect(Self.storedKeys(plain).count == urls.count)

        let decoding = try CLI()
        let decoded = try await decoding.runOffPool(["--json", "--retries", "0", "--decode"] + urls)
        #expect(decoded.signal == nil && decoded.status == 1, "status \(decoded.status): \(decoded.stderr)")
        for d in Self.damaged {
            let error = try #require(FetchE2ETests.error(decoded, server.url(d.path)), "\(d.path): \(decoded.stdout)")
            #expect(error["kind"] as? String == "not-an-image", "\(d.path): \(error)")
            #expect((error["message"] as? String ?? "").hasPrefix("decoder refused the image: "), "\(d.path): \(error)")
        }
        for w in Self.whole {
            let line = try #require(FetchE2ETests.terminal(decoded, server.url(w.path)), "\(w.path): \(decoded.stdout)")
            #expect(line["phase"] as? String == "success" && line["checked"] as? String == w.checked, "\(w.path): \(line)")
        }
        #expect(Self.storedKeys(decoding).count == Self.whole.count, "only what decodes is stored")

        // cache verify --decode on the cache filled without --decode removes the same three.
        let verify = try await plain.runOffPool(["cache", "verify", "--decode"])
        #expect(verify.status == 0, "status \(verify.status): \(verify.stderr)")
        for d in Self.damaged {
            #expect(verify.stdout.contains("removed  \(server.url(d.path))  decoder refused the image: "), "\(d.path): \(verify.stdout)")
        }
        #expect(verify.stdout.contains("\(Self.whole.count) intact, \(Self.damaged.count) corrupt removed"), "\(verify.stdout)")
        #expect(Self.storedKeys(plain).count == Self.whole.count)
        // Without --decode, cache verify keeps its old meaning: the remaining entries are intact.
        let again = try await plain.runOffPool(["cache", "verify"])
        #expect(again.stdout.contains("\(Self.whole.count) intact, 0 corrupt removed"), "\(again.stdout)")
    }

    /// With `--remote-cache`, an object from the tier is decoded too: a damaged
    /// image uploaded by a run without `--decode` is refused by a host that
    /// decodes, which then asks the origin and stores nothing.
    @Test func anObjectFromTheTierIsDecodedToo() async throws {
        let server = try Self.server()
        let store = try WebDAVStore()
        let url = server.url(Self.damaged[0].path)
        let first = try await CLI().runOffPool(["--json", "--retries", "0", "--remote-cache", store.url, url])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(store.objects().count == 1, "the damaged image went to the tier")
        let requestsBefore = server.totalRequests

        let host = try CLI()
        let second = try await host.runOffPool(["--json", "--retries", "0", "--decode", "--remote-cache", store.url, url])
        #expect(second.status == 1, "\(second.stdout)")
        let error = try #require(FetchE2ETests.error(second, url), "\(second.stdout)")
        #expect((error["message"] as? String ?? "").hasPrefix("decoder refused the image: "), "\(error)")
        #expect(server.totalRequests == requestsBefore + 1, "the origin is asked once the tier's copy is refused")
        #expect(Self.storedKeys(host).isEmpty, "nothing of it is stored")
    }

    /// The libraries `--decode` loads keep their own libcurl: libvips brings
    /// libcurl-gnutls, libcfitsio and libhdf5, whose calls into libcurl's API
    /// (libcurl-gnutls's own: curl_easy_perform calls curl_multi_init …)
    /// the dynamic linker bound to the executable's trampolines of the same
    /// names (CCurl.c), that is into the OpenSSL libcurl, while they were
    /// exported: 24 such bindings under LD_DEBUG=bindings. And the decode works.
    /// Only the executable's string compares and printf pair (CCurl.c) are for
    /// every libcurl: functions of their arguments alone, which answer as
    /// libcurl's own do; the OpenSSL libcurl is bound to them, and to its
    /// curl_url_get (libcurl's own of the same 7.88.1 URL handle, but a plain path's copy).
    @Test func theLibrariesDecodeLoadsKeepTheirOwnLibcurl() async throws {
        let server = try Self.server()
        let cli = try CLI()
        let trace = try TempDirectory(prefix: "asyncfetch-ld")
        let url = server.url(Self.whole[0].path)
        let result = try await cli.runOffPool(["--json", "--retries", "0", "--decode", url],
                                              environment: ["LD_DEBUG": "bindings", "LD_DEBUG_OUTPUT": trace.path + "/ld"])
        let line = try #require(FetchE2ETests.terminal(result, url), "\(result.stdout)\(result.stderr)")
        #expect(line["phase"] as? String == "success" && line["checked"] as? String == "decoded", "\(line)")
        let files = try FileManager.default.contentsOfDirectory(atPath: trace.path)
        let bindings = try files.flatMap { try String(contentsOfFile: trace.path + "/" + $0, encoding: .utf8).split(separator: "\n") }
        #expect(bindings.contains { $0.contains("libvips.so") }, "LD_DEBUG traced no binding of libvips: \(files)")
        let toExecutable = bindings.filter { $0.contains("normal symbol `curl_") && !$0.contains(" to /lib") && !$0.contains(" to /usr") }
        let forEveryLibcurl = ["`curl_strequal'", "`curl_strnequal'", "`curl_msnprintf'", "`curl_maprintf'", "`curl_url_get'"]
        let ours = toExecutable.filter { line in !forEveryLibcurl.contains { line.contains($0) } }
        #expect(ours.isEmpty, "bound to the executable: \(ours.prefix(5))")
        for name in forEveryLibcurl {
            #expect(toExecutable.contains { $0.contains("libcurl.so.4 [") && $0.contains(name) }, "libcurl's \(name) is not the executable's")
        }
    }
}
