import DiskCache
import Fetch
import Foundation
import Loader
import HTTPCaching
import Support
import Testing
import TestSupport

/// The freshness and validation rules against a real nginx: its own ETag,
/// Last-Modified (If-Modified-Since is an exact match there), 304s, and
/// headers set with `add_header` / `expires`. Each location serves
/// Fixtures/images under a prefix that names the rule.
@Suite struct NginxCachingTests {
    static func nginx() throws -> NginxServer {
        let images = Paths.fixtures + "/images/"
        func location(_ prefix: String, _ lines: String) -> String {
            "location /\(prefix)/ { alias \(images); \(lines) }\n"
        }
        let config = location("plain", "")
            + location("fresh", "add_header Cache-Control \"max-age=600\";")
            + location("dup", "add_header Cache-Control \"max-age=600\"; add_header Cache-Control \"max-age=0\";")
            + location("invalid", "add_header Cache-Control \"max-age=soon\"; add_header Expires \"Thu, 01 Jan 2099 00:00:00 GMT\";")
            + location("expires", "expires 1h;")
            + location("expired", "add_header Expires \"Thu, 01 Jan 1970 00:00:01 GMT\";")
            + location("aged", "add_header Cache-Control \"max-age=600\"; add_header Age 600;")
            + location("nostore", "add_header Cache-Control \"no-store\";")
            + location("nocache", "add_header Cache-Control \"no-cache\";")
            + location("mustrevalidate", "add_header Cache-Control \"max-age=0, must-revalidate\";")
            + location("stale", "add_header Cache-Control \"max-age=0\";")
            + location("vary", "add_header Vary Accept; add_header Cache-Control \"max-age=600\";")
            + location("lastmodified", "etag off; add_header Cache-Control \"max-age=0\";")
            // An empty add_header removes Last-Modified: a response with an ETag only.
            + location("etagonly", "add_header Last-Modified \"\"; add_header Cache-Control \"max-age=0\";")
            + "location = /gone.png { add_header Cache-Control \"max-age=600\" always; return 404; }\n"
            + "location = /gone-plain.png { return 404; }\n"
        return try NginxServer(root: Paths.fixtures, extraConfig: config)
    }

    struct Run {
        let nginx: NginxServer
        let temp: TempDirectory
        let store: DiskCacheStore

        init() throws {
            nginx = try NginxCachingTests.nginx()
            temp = try TempDirectory(prefix: "asyncfetch-nginx-loader")
            store = try DiskCacheStore(directory: temp.file("cache"))
        }

        func load(_ path: String, _ configure: (inout LoaderOptions) -> Void = { _ in }) async -> Phase {
            await ImageLoader(cache: store, options: LoaderHarness.options(configure)).load(nginx.url(path))
        }

        /// Statuses nginx logged for `path` (it writes the log after each response: poll briefly).
        func statuses(_ path: String, count: Int) async -> [Int] {
            let deadline = monotonicSeconds() + 2
            while true {
                let log = nginx.accessLog().filter { $0.path == path }.map(\.status)
                if log.count >= count || monotonicSeconds() > deadline { return log }
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
        }
    }

    @Test func freshnessRulesAgainstNginx() async throws {
        let run = try Run()
        let png = "red-64x48.png"
        for prefix in ["plain", "fresh", "dup", "invalid", "expires", "expired", "aged", "nocache"] {
            #expect(await run.load("/\(prefix)/\(png)").source == .network, "\(prefix)")
        }
        // Fresh: no request at all.
        for prefix in ["plain", "fresh", "dup", "expires"] {
            #expect(await run.load("/\(prefix)/\(png)").source == .cache, "\(prefix)")
            #expect(await run.statuses("/\(prefix)/\(png)", count: 1) == [200], "\(prefix)")
        }
        // Stale: revalidated with nginx's ETag, which answers 304.
        for prefix in ["invalid", "expired", "aged", "nocache"] {
            #expect(await run.load("/\(prefix)/\(png)").source == .revalidated, "\(prefix)")
            #expect(await run.statuses("/\(prefix)/\(png)", count: 2) == [200, 304], "\(prefix)")
        }
        #expect(await run.load("/nocache/\(png)").source == .revalidated, "no-cache: before every use")
    }

    @Test func overridesRefreshAndNoStoreAgainstNginx() async throws {
        let run = try Run()
        let jpg = "photo-120x80.jpg"
        _ = await run.load("/plain/\(jpg)")
        _ = await run.load("/nocache/\(jpg)")
        #expect(await run.load("/plain/\(jpg)") { $0.freshness = Freshness(maxAgeOverride: 0) }.source == .revalidated)
        // nginx sends Last-Modified: without the 10 % heuristic, nothing makes the copy fresh.
        #expect(await run.load("/plain/\(jpg)") { $0.freshness = Freshness(defaultTTL: 0, heuristic: false) }.source == .revalidated)
        #expect(await run.load("/plain/\(jpg)") { $0.refresh = true }.source == .revalidated)
        #expect(await run.load("/nocache/\(jpg)") { $0.freshness = Freshness(maxAgeOverride: 3600) }.source == .cache)
        #expect(await run.statuses("/plain/\(jpg)", count: 4) == [200, 304, 304, 304])
        let secret = try #require(await run.load("/nostore/\(jpg)").result)
        #expect(secret.path == nil && secret.width == 120)
        #expect(await run.load("/nostore/\(jpg)").source == .network)
        #expect(await run.statuses("/nostore/\(jpg)", count: 2) == [200, 200])
    }

    @Test func ifNoneMatchAloneGetsA304FromNginx() async throws {
        let run = try Run()
        _ = await run.load("/etagonly/favicon-16x16.ico")
        let stored = try #require(run.store.lookup(try CacheKey(url: run.nginx.url("/etagonly/favicon-16x16.ico")).hex))
        #expect(stored.metadata.header("ETag") != nil && stored.metadata.header("Last-Modified") == nil)
        #expect(await run.load("/etagonly/favicon-16x16.ico").source == .revalidated)
        #expect(await run.statuses("/etagonly/favicon-16x16.ico", count: 2) == [200, 304])
    }

    @Test func ifModifiedSinceIsSentVerbatimSoNginxsExactMatchSucceeds() async throws {
        let run = try Run()
        _ = await run.load("/lastmodified/anim-33x17.gif")
        let stored = try #require(run.store.lookup(try CacheKey(url: run.nginx.url("/lastmodified/anim-33x17.gif")).hex))
        #expect(stored.metadata.header("ETag") == nil && stored.metadata.header("Last-Modified") != nil)
        #expect(await run.load("/lastmodified/anim-33x17.gif").source == .revalidated)
        #expect(await run.statuses("/lastmodified/anim-33x17.gif", count: 2) == [200, 304])
    }

    @Test func negativeCachingVaryAndStaleIfErrorAgainstNginx() async throws {
        let run = try Run()
        #expect(await run.load("/gone.png").error?.status == 404)
        #expect(await run.load("/gone.png").error?.source == .cache)
        _ = await run.load("/gone-plain.png")
        #expect(await run.load("/gone-plain.png").error?.source == nil)
        #expect(await run.statuses("/gone.png", count: 1).count == 1)
        #expect(await run.statuses("/gone-plain.png", count: 2).count == 2)

        let webp: (inout LoaderOptions) -> Void = { $0.fetch.headers.set(name: "Accept", value: "image/webp") }
        _ = await run.load("/vary/lossy-50x40.webp", webp)
        #expect(await run.load("/vary/lossy-50x40.webp", webp).source == .cache)
        #expect(await run.load("/vary/lossy-50x40.webp").source == .network)

        _ = await run.load("/stale/bitmap-30x20.bmp")
        _ = await run.load("/mustrevalidate/bitmap-30x20.bmp")
        run.nginx.stop()
        let staleIfError: (inout LoaderOptions) -> Void = { $0.staleIfError = true }
        #expect(await run.load("/stale/bitmap-30x20.bmp", staleIfError).source == .stale)
        #expect(await run.load("/mustrevalidate/bitmap-30x20.bmp", staleIfError).error?.kind == .connect)
        #expect(await run.load("/stale/bitmap-30x20.bmp").error?.kind == .connect)
    }
}
