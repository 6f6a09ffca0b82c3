import Foundation
import Testing
import TestSupport

/// Reading works with a read-only cache (issue 16, item 6): `-o` and
/// `--output-dir` still get the body, with a warning that the cache could
/// not be updated; `--refresh` of a stored entry too. Uses a real tmpfs
/// remounted read-only (tests run as root, which ignores permission bits).
@Suite struct ReadOnlyCacheE2ETests {
    /// A cache on a tmpfs of its own (writable until `remountReadOnly`), and
    /// the environment that points a run at it, temporary files outside it.
    private static func tmpfsCache(for cli: CLI) throws -> (TmpfsMount, [String: String]) {
        let mount = try TmpfsMount(at: cli.cache.path + "/ro-fs", size: "4m")
        return (mount, ["ASYNCFETCH_CACHE_DIR": mount.path, "TMPDIR": cli.cache.path])
    }

    @Test(.enabled(if: CacheE2E.canMount, "needs mount -o remount,ro (root in a VM or privileged container)"))
    func aReadOnlyCacheStillDeliversWithAWarning() throws {
        let (server, cli) = try FixtureSite.start()
        let (mount, env) = try Self.tmpfsCache(for: cli)
        defer { mount.unmount() }
        let png = FixtureSite.png
        server.route("/tagged.png", [ScriptedResponse.ok(png, headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=600")]),
                                     ScriptedResponse.notModified(headers: [("ETag", "\"v1\"")])])
        let stored = server.url("/tagged.png")
        #expect(try cli.run([stored], environment: env).status == 0)
        try mount.remountReadOnly()
        let filesBefore = CacheE2E.files(in: mount.path)

        let url = server.url("/images/photo-120x80.jpg")
        let expected = try Data(contentsOf: URL(fileURLWithPath: Paths.fixtures + "/images/photo-120x80.jpg"))
        let out = cli.cache.path + "/photo.jpg"
        let single = try cli.run([url, "-o", out], environment: env)
        #expect(single.status == 0, "a warning, not a failure: \(single.stdout)\(single.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == expected)
        #expect(single.stdout.contains("(not stored: the cache could not be written)"), "\(single.stdout)")
        #expect(single.stderr.contains("warning: \(url): the cache could not be updated: ")
                && single.stderr.contains("Read-only file system"), "\(single.stderr)")

        let folder = cli.cache.path + "/photos"
        let batch = try cli.run(["--json", "-P", folder, "--refresh", url, stored], environment: env)
        #expect(batch.status == 0, "\(batch.stdout)\(batch.stderr)")
        let lines = try #require(CLI.jsonLines(batch.stdout)).filter { $0["phase"] as? String == "success" }
        #expect(lines.count == 2)
        let fresh = try #require(lines.first { $0["url"] as? String == url })
        #expect(fresh["stored"] as? Bool == false && fresh["path"] == nil)
        let revalidated = try #require(lines.first { $0["url"] as? String == stored })
        #expect(revalidated["source"] as? String == "revalidated", "--refresh of a stored entry: \(revalidated)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/photo-120x80.jpg")) == expected)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/tagged.png")) == Data(png))
        #expect(batch.stderr.contains("\(stored): the cache could not be updated"), "\(batch.stderr)")

        // Without -o or -P the body has nowhere to go: a failure, as before.
        let nowhere = try cli.run([url], environment: env)
        #expect(nowhere.status == 1 && nowhere.stdout.contains("  cannot create a file in \(mount.path): Read-only file system"),
                "\(nowhere.stdout)")
        #expect(CacheE2E.files(in: mount.path) == filesBefore)
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: cli.cache.path)) ?? []
        #expect(!leftovers.contains { $0.hasPrefix("asyncfetch-") && $0.hasSuffix(".part") }, "no temporary file left: \(leftovers)")
    }

    /// A `no-store` answer drops the older entry (the server no longer allows
    /// keeping it); one that cannot be removed would still be served later,
    /// so the run says so in a warning rather than going on silently.
    @Test(.enabled(if: CacheE2E.canMount, "needs mount -o remount,ro (root in a VM or privileged container)"))
    func aNoStoreAnswerWarnsWhenTheOlderEntryCannotBeRemoved() throws {
        let (server, cli) = try FixtureSite.start()
        let (mount, env) = try Self.tmpfsCache(for: cli)
        defer { mount.unmount() }
        let png = FixtureSite.png
        server.route("/changed.png", [ScriptedResponse.ok(png, headers: [("Cache-Control", "max-age=600")]),
                                      ScriptedResponse.ok(png, headers: [("Cache-Control", "no-store")])])
        let url = server.url("/changed.png")
        #expect(try cli.run([url], environment: env).status == 0)
        try mount.remountReadOnly()
        let filesBefore = CacheE2E.files(in: mount.path)

        let refreshed = try cli.run(["--refresh", url], environment: env)
        #expect(refreshed.status == 0, "the body arrived: \(refreshed.stdout)\(refreshed.stderr)")
        #expect(refreshed.stdout.contains("(not stored: no-store)"), "\(refreshed.stdout)")
        #expect(refreshed.stderr.contains("warning: \(url): the older stored copy could not be removed (the server now says no-store): ")
                && refreshed.stderr.contains("Read-only file system"), "\(refreshed.stderr)")
        #expect(CacheE2E.files(in: mount.path) == filesBefore)
    }
}
