import DiskCache
import Fetch
import HTTPCaching
import Testing

/// What is stored of a response, and with which headers (RFC 9111 §3).
@Suite struct StorabilityTests {
    static let now = 1_000_000.0

    @Test func onlyTheHeadersCachingNeedsAreStoredInTheirOrder() {
        let headers: HTTPHeaders = [
            "Set-Cookie": "id=secret", "ETag": "\"v1\"", "content-type": "image/png", "Authorization": "x",
            "Cache-Control": "max-age=60", "X-Custom": "1", "Cache-Control": "public", "VARY": "Accept",
        ]
        let stored = Storability.storedHeaders(headers)
        #expect(stored == [CacheMetadata.Header("ETag", "\"v1\""), CacheMetadata.Header("content-type", "image/png"),
                           CacheMetadata.Header("Cache-Control", "max-age=60"), CacheMetadata.Header("Cache-Control", "public"),
                           CacheMetadata.Header("VARY", "Accept")])
        #expect(!Storability.isStored("Set-Cookie") && Storability.isStored("LAST-MODIFIED"))
    }

    /// `isStored` picks its candidates by length: it must agree with the list
    /// for every listed name in any case, and refuse each name changed by one byte.
    @Test func isStoredAgreesWithTheListOfStoredNames() {
        for name in Storability.storedHeaderNames {
            #expect(Storability.isStored(name) && Storability.isStored(name.uppercased()), "\(name)")
            let bytes = Array(name.utf8)
            for i in bytes.indices {
                for other: UInt8 in [0x2D, 0x5F, 0x78, bytes[i] ^ 0x20 ^ 0x01] where other != bytes[i] && other != bytes[i] ^ 0x20 {
                    var changed = bytes
                    changed[i] = other
                    let text = String(decoding: changed, as: UTF8.self)
                    #expect(Storability.isStored(text) == Storability.storedHeaderNames.contains(text), "\(text)")
                }
            }
            #expect(!Storability.isStored(name + "s") && !Storability.isStored(String(name.dropLast())))
        }
        // Only letters fold: "-" and "\r" are 0x20 apart but different characters.
        #expect(!Storability.isStored("content\rtype") && !Storability.isStored("Content-Type "))
    }

    /// `isStored` compares a word at a time (the letters OR-ed with 0x20): every ASCII byte
    /// at every place of every stored name, in both cases, against the list compared a byte at a time.
    @Test func isStoredAgreesWithTheListForEveryByteAtEveryPlace() {
        func oracle(_ bytes: [UInt8]) -> Bool {
            let folded = bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
            return Storability.storedHeaderNames.contains { Array($0.utf8) == folded }
        }
        var mismatches: [String] = []
        for name in Storability.storedHeaderNames {
            for cased in [Array(name.utf8), Array(name.uppercased().utf8)] {
                for i in cased.indices {
                    for byte: UInt8 in 0...0x7F {
                        var changed = cased
                        changed[i] = byte
                        let text = String(decoding: changed, as: UTF8.self)
                        if Storability.isStored(text) != oracle(changed) { mismatches.append(text) }
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
    }

    @Test func noStoreForbidsStoringUnlessMustUnderstandKnowsTheStatus() {
        #expect(Storability.mayStore(status: 200, CacheControl(["max-age=60"])))
        #expect(!Storability.mayStore(status: 200, CacheControl(["no-store"])))
        #expect(Storability.mayStore(status: 200, CacheControl(["no-store, must-understand"])))
        #expect(Storability.mayStore(status: 404, CacheControl(["must-understand, no-store"])))
        #expect(!Storability.mayStore(status: 299, CacheControl(["must-understand"])))
        #expect(!Storability.mayStore(status: 599, CacheControl(["max-age=60, must-understand"])))
        #expect(Storability.mayStore(status: 200, CacheControl(["no-cache"])), "no-cache is stored, then revalidated")
    }

    @Test func aResumedBodyIsStoredAsTheWhole200() {
        let headers: HTTPHeaders = ["Content-Range": "bytes 10-19/20", "ETag": "\"e\"", "Content-Type": "image/png"]
        let vary = [CacheMetadata.Header("accept", "*/*")]
        let meta = Storability.record(url: "https://x.test/a.png", status: 206, headers: headers, varyRequest: vary,
                                      requestTime: 5, responseTime: 6, format: "png", width: 3, height: 4)
        #expect(meta.status == 200 && meta.hasBody)
        #expect(meta.headers == [CacheMetadata.Header("ETag", "\"e\""), CacheMetadata.Header("Content-Type", "image/png")])
        #expect(meta.varyRequest == vary && meta.requestTime == 5 && meta.responseTime == 6)
        #expect(meta.format == "png" && meta.width == 3 && meta.height == 4)
        #expect(Storability.record(url: "u", status: 203, headers: [:], varyRequest: [], requestTime: 0, responseTime: 0).status == 203)
    }

    @Test func aCutOffBodyKeepsItsValidator() {
        let meta = Storability.partialRecord(url: "https://x.test/big.png",
                                             headers: ["ETag": "\"big\"", "Server": "nginx"],
                                             requestTime: 1, responseTime: 2)
        #expect(meta.status == 200 && meta.header("ETag") == "\"big\"" && meta.header("Server") == nil)
    }

    func error(_ status: Int, _ headers: [(String, String)], freshness: Freshness = Freshness(defaultTTL: 0)) -> CacheMetadata? {
        Storability.errorRecord(url: "https://x.test/e", status: status, headers: HTTPHeaders(headers.map { HTTPHeaders.Field(name: $0.0, value: $0.1) }), varyRequest: [],
                                requestTime: Self.now, responseTime: Self.now, freshness: freshness, now: Self.now)
    }

    @Test func anErrorIsRememberedOnlyWhenFreshByItsOwnHeaders() {
        let remembered = error(404, [("Cache-Control", "max-age=60"), ("Set-Cookie", "a=b")])
        #expect(remembered?.hasBody == false && remembered?.status == 404)
        #expect(remembered?.headers == [CacheMetadata.Header("Cache-Control", "max-age=60")])
        #expect(error(404, []) == nil, "no freshness: nothing to remember")
        #expect(error(404, [], freshness: Freshness(defaultTTL: 3600)) == nil, "errors get no default lifetime")
        #expect(error(404, [], freshness: Freshness(defaultTTL: 0, maxAgeOverride: 3600)) == nil, "nor --max-age")
        #expect(error(404, [("Cache-Control", "max-age=60, no-cache")]) == nil)
        #expect(error(404, [("Cache-Control", "max-age=60, no-store")]) == nil)
        #expect(error(599, [("Cache-Control", "max-age=60, must-understand")]) == nil)
        #expect(error(101, [("Cache-Control", "max-age=60")]) == nil, "not a final status")
        let dayOld = [("Date", HTTPDate.format(Self.now)), ("Last-Modified", HTTPDate.format(Self.now - 86_400))]
        #expect(error(410, dayOld) != nil, "410 is heuristically cacheable")
        #expect(error(410, dayOld, freshness: Freshness(defaultTTL: 0, heuristic: false)) == nil, "--no-heuristic")
        #expect(error(403, dayOld) == nil, "403 is not")
    }
}
