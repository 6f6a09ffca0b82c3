import DiskCache
import Fetch
import Foundation
import Loader
import HTTPCaching
import Support
import TestSupport

/// A scripted server, a private cache directory and loaders over it, for
/// integration tests of the loader against real HTTP on 127.0.0.1.
struct LoaderHarness {
    let server: ScriptedServer
    let temp: TempDirectory
    let store: DiskCacheStore

    init() throws {
        server = try ScriptedServer()
        temp = try TempDirectory(prefix: "asyncfetch-loader")
        store = try DiskCacheStore(directory: temp.file("cache"))
    }

    /// A loader with no retries and short timeouts (tests stay fast), then `configure`.
    func loader(_ configure: (inout LoaderOptions) -> Void = { _ in }) -> ImageLoader {
        ImageLoader(cache: store, options: Self.options(configure))
    }

    static func options(_ configure: (inout LoaderOptions) -> Void = { _ in }) -> LoaderOptions {
        var options = LoaderOptions()
        options.fetch.retries = 0
        options.fetch.connectTimeout = 2
        options.fetch.timeout = 5
        configure(&options)
        return options
    }

    /// The suite's setting (`--default-ttl 0`): only the server's headers make a copy fresh.
    static func noDefaultTTL(_ options: inout LoaderOptions) {
        options.freshness = Freshness(defaultTTL: 0)
    }

    /// One load with a fresh loader configured by `configure` (a new run of the tool).
    func load(_ path: String, _ configure: (inout LoaderOptions) -> Void = { _ in }) async -> Phase {
        await loader(configure).load(server.url(path))
    }

    /// The stored metadata of `path`'s URL, if the cache holds an intact entry.
    func entry(_ path: String) throws -> CacheEntry? {
        store.lookup(try CacheKey(url: server.url(path)).hex)
    }

    /// Files left in the cache's temporary directory.
    var temporaryFiles: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: temp.file("cache/.tmp"))) ?? []
    }

    static let png = ImageFixture.png
    static let jpeg = ImageFixture.jpeg

    static func fixture(_ name: String) -> [UInt8] { ImageFixture.bytes(name) }
}

extension Phase {
    var result: LoadResult? {
        if case .success(let result) = self { return result }
        return nil
    }

    var error: LoadError? {
        if case .failure(let error) = self { return error }
        return nil
    }

    var source: Source? { result?.source }
}

extension ScriptedServer {
    /// `waitForRequests` without blocking a thread of the cooperative pool
    /// (which has only as many threads as cores: blocking one can starve the
    /// very tasks being waited for).
    func requestsArrive(_ path: String, count: Int = 1, timeout: Double = 5) async -> Bool {
        let deadline = monotonicSeconds() + timeout
        while requestCount(path) < count {
            if monotonicSeconds() > deadline { return false }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        return true
    }
}
