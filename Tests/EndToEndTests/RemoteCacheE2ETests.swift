import Foundation
import Glibc
import RemoteCache
import Testing
import TestSupport

/// The shared remote cache tier (`--remote-cache`, issue 17) through the
/// built binary: two "hosts" (two cache directories, two processes) sharing
/// one nginx WebDAV store on 127.0.0.1, an origin that counts requests.
@Suite(.serialized) struct RemoteCacheE2ETests {
    static let png = FixtureSite.png

    /// nginx with the WebDAV module (TestSupport), with what these tests ask of it.
    typealias Store = WebDAVStore

    /// An origin serving the same PNG at /img/N.png (max-age 600), counting requests.
    static func origin(count: Int, delay: Double = 0) -> (ScriptedServer, [String])? {
        guard let server = try? ScriptedServer() else { return nil }
        var urls: [String] = []
        for n in 0..<count {
            var response = ScriptedResponse.ok(png, headers: [("Content-Type", "image/png"), ("Cache-Control", "max-age=600")])
            response.delayBeforeHeaders = delay
            server.route("/img/\(n).png", response)
            urls.append(server.url("/img/\(n).png"))
        }
        return (server, urls)
    }

    static func json(_ result: ProcessResult) throws -> [[String: Any]] {
        try #require(CLI.jsonLines(result.stdout), "stdout: \(result.stdout)\nstderr: \(result.stderr)")
    }

    static func successes(_ lines: [[String: Any]]) -> [String: String] {
        var sources: [String: String] = [:]
        for line in lines where line["phase"] as? String == "success" {
            sources[line["url"] as? String ?? ""] = line["source"] as? String
        }
        return sources
    }

    static func summary(_ lines: [[String: Any]]) -> [String: Any] { (lines.last?["summary"] as? [String: Any]) ?? [:] }

    /// Waits for nginx to log `count` PUTs (it logs after answering).
    static func waitForPuts(_ store: Store, _ count: Int) -> Bool {
        for _ in 0..<100 where store.puts() < count { usleep(20_000) }
        return store.puts() >= count
    }

    @Test func theSecondHostMakesNoOriginRequest() throws {
        let store = try Store()
        let (origin, urls) = try #require(Self.origin(count: 20))
        let hostA = try CLI(), hostB = try CLI()
        let first = try hostA.run(["--json", "--remote-cache", store.url] + urls)
        #expect(first.status == 0, "\(first.stderr)\n\(first.stdout)")
        let firstLines = try Self.json(first)
        #expect(Set(Self.successes(firstLines).values) == ["network"])
        let tier = Self.summary(firstLines)["remoteCache"] as? [String: Any]
        #expect(tier?["uploads"] as? Int == 20, "the process waits for its uploads before it exits: \(tier ?? [:])")
        #expect(store.objects().count == 20)
        #expect(origin.totalRequests == 20)

        // The second host names the tier through the environment.
        let second = try hostB.run(["--json"] + urls, environment: ["ASYNCFETCH_REMOTE_CACHE": store.url])
        #expect(second.status == 0, "\(second.stderr)")
        let lines = try Self.json(second)
        let sources = Self.successes(lines)
        #expect(sources.count == 20 && Set(sources.values) == ["remote"], "\(sources)")
        #expect(Self.summary(lines)["remote"] as? Int == 20)
        #expect(origin.totalRequests == 20, "no origin request from the second host")
        #expect(store.puts() == 20, "nothing fetched from the tier is uploaded again")
        // Byte for byte the origin's body, and now a local hit.
        let path = try #require(lines.first { $0["phase"] as? String == "success" }?["path"] as? String)
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path))) == Self.png)
        let third = try Self.json(try hostB.run(["--json", "--offline"] + urls))
        #expect(Set(Self.successes(third).values) == ["cache"])

        // cache pull: a third host, no origin at all.
        let hostC = try CLI()
        let list = hostC.cache.file("urls.txt")
        try (urls.joined(separator: "\n") + "\n").write(toFile: list, atomically: true, encoding: .utf8)
        origin.stop()
        let pulled = try hostC.run(["cache", "pull", "--remote-cache", store.url, "-i", list])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(Set(pulled.stdout.split(separator: "\n").map(String.init)) == Set(urls.map { "pulled   " + $0 }))
        #expect(pulled.stderr.contains("20 pulled, 0 already cached, 0 not pulled (remote cache: 0 misses, 0 errors)"),
                "\(pulled.stderr)")
        let offline = try Self.json(try hostC.run(["--json", "--offline"] + urls))
        #expect(Self.successes(offline).count == 20)
    }

    @Test func aCorruptedOrForeignObjectIsRefused() throws {
        let store = try Store()
        let (origin, urls) = try #require(Self.origin(count: 4))
        let hostA = try CLI(), hostB = try CLI()
        #expect(try hostA.run(["--remote-cache", store.url] + urls).status == 0)
        #expect(store.objects().count == 4)
        // 0: one body byte flipped; 1: cut short; 2: the object of URL 3 under URL 2's name.
        let flipped = try store.objectPath(urls[0])
        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: flipped)))
        bytes[bytes.count - 20] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: flipped))
        let cut = try store.objectPath(urls[1])
        #expect(truncate(cut, off_t(bytes.count - 10)) == 0)
        let foreign = try store.objectPath(urls[2])
        try FileManager.default.removeItem(atPath: foreign)
        try FileManager.default.copyItem(atPath: try store.objectPath(urls[3]), toPath: foreign)
        chmod(foreign, 0o644)   // readable by nginx's workers

        let result = try hostB.run(["--json", "-v", "--remote-cache", store.url] + urls)
        #expect(result.status == 0, "\(result.stderr)")
        let sources = Self.successes(try Self.json(result))
        #expect(sources[urls[0]] == "network" && sources[urls[1]] == "network" && sources[urls[2]] == "network", "\(sources)")
        #expect(sources[urls[3]] == "remote")
        #expect(result.stderr.contains("digest"), "\(result.stderr)")
        #expect(result.stderr.contains("names another URL"), "\(result.stderr)")
        #expect(origin.totalRequests == 4 + 3)
        // What host B stored is the origin's body, and `cache verify` agrees.
        for url in urls {
            let body = hostB.cacheDir + "/" + (try CLI.md5sum(url))
            #expect(try Array(Data(contentsOf: URL(fileURLWithPath: body))) == Self.png)
        }
        #expect(try hostB.run(["cache", "verify"]).status == 0)
    }

    @Test func aBrokenRemoteNeverFailsAURL() throws {
        let (origin, urls) = try #require(Self.origin(count: 6))
        // Nothing listens on the tier's port; then a tier that answers 503 and 403 to everything.
        let closed = try ScriptedServer()
        let deadURL = closed.url("/cache/")
        closed.stop()
        let root = try TempDirectory(prefix: "asyncfetch-remote")
        let failing = try NginxServer(root: root.path, extraConfig: "location /cache/ { return 503; }")
        let forbidden = try NginxServer(root: root.path, extraConfig: "location /cache/ { return 403; }")
        for (n, tier) in [deadURL, failing.url("/cache/"), forbidden.url("/cache/")].enumerated() {
            let host = try CLI()
            let result = try host.run(["--json", "--remote-cache", tier] + urls)
            #expect(result.status == 0, "\(tier): \(result.stderr)")
            let lines = try Self.json(result)
            #expect(Set(Self.successes(lines).values) == ["network"] && Self.successes(lines).count == 6)
            // One warning for the errors; one more if the tier was turned off (it was not given up on before).
            let warnings = result.stderr.split(separator: "\n").filter { $0.contains("remote cache") }
            #expect(warnings.filter { !$0.contains("not used for the rest of this run") }.count == 1, "one warning per run: \(result.stderr)")
            #expect(warnings.count <= 2, "\(result.stderr)")
            let counts = Self.summary(lines)["remoteCache"] as? [String: Any]
            #expect(((counts?["readErrors"] as? Int) ?? 0) + ((counts?["uploadErrors"] as? Int) ?? 0) > 0, "\(counts ?? [:])")
            #expect(origin.totalRequests == 6 * (n + 1))
        }
        // -v shows each error.
        let host = try CLI()
        let verbose = try host.run(["-v", "--remote-cache", failing.url("/cache/")] + urls)
        #expect(verbose.stderr.split(separator: "\n").filter { $0.contains("HTTP 503") }.count >= 6, "\(verbose.stderr)")
    }

    /// `cache pull` from a tier that fails said "not in the remote cache"
    /// for every URL, and its warning said "the origins are used instead",
    /// though the command contacts no origin. A URL the tier lacks (404) and
    /// one it could not serve (503, 403: a wrong key, nothing listening) are
    /// told apart, and the exit status is 1. The first error's warning says
    /// what became of that URL (before: "(cache pull contacts no origin; …)").
    @Test func pullSaysWhenTheTierFailedRatherThanLackedTheURL() throws {
        let root = try TempDirectory(prefix: "asyncfetch-remote")
        let failing = try NginxServer(root: root.path, extraConfig: "location /cache/ { return 503; }")
        let forbidden = try NginxServer(root: root.path, extraConfig: "location /cache/ { return 403; }")
        let closed = try ScriptedServer()
        let deadURL = closed.url("/cache/")
        closed.stop()
        let urls = ["http://origin.invalid/a.png", "http://origin.invalid/b.png"]
        for tier in [failing.url("/cache/"), forbidden.url("/cache/"), deadURL] {
            let result = try CLI().run(["cache", "pull", "--remote-cache", tier] + urls)
            #expect(result.status == 1, "\(tier): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n").map(String.init)
            for url in urls {
                #expect(lines.contains("asyncfetch: \(url): not pulled: the remote cache could not be read (-v shows every remote cache error)"),
                        "\(tier): \(result.stderr)")
            }
            #expect(!result.stderr.contains("not in the remote cache") && !result.stderr.contains("origins are used"), "\(result.stderr)")
            #expect(lines.filter { $0.hasPrefix("asyncfetch: warning: remote cache: GET \(tier)") }.count == 1
                    && lines.contains { $0.hasPrefix("asyncfetch: warning: remote cache: GET \(tier)")
                        && $0.hasSuffix(" (not pulled: cache pull contacts no origin; -v shows every remote cache error)") },
                    "\(result.stderr)")
            #expect(lines.last == "0 pulled, 0 already cached, 2 not pulled (remote cache: 0 misses, 2 errors)", "\(result.stderr)")
        }
        // A tier that answers 404 lacks the URL: that is what it says.
        let empty = try Store()
        let missing = try CLI().run(["cache", "pull", "--remote-cache", empty.url, urls[0]])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("asyncfetch: \(urls[0]): not in the remote cache"), "\(missing.stderr)")
        #expect(!missing.stderr.contains("could not be read"), "\(missing.stderr)")
    }

    /// An `-i` list that fails part way (`/proc/self/mem` opens, and its
    /// first read fails: EIO) is unreadable, as for a run: the summary,
    /// then the reason, exit 2. It exited 0 with "0 pulled, 0 already cached,
    /// 0 not pulled", as if the list had been read.
    @Test func pullOfAListThatFailsPartWayIsAnUnreadableList() throws {
        let empty = try Store()
        let result = try CLI().run(["cache", "pull", "--remote-cache", empty.url, "-i", "/proc/self/mem"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "0 pulled, 0 already cached, 0 not pulled (remote cache: 0 misses, 0 errors)\n"
                + "asyncfetch: cannot read -i /proc/self/mem: Input/output error\n", "\(result.stderr)")
    }

    /// A session token with a line break (a secret file's trailing newline)
    /// could never be sent: the run is refused at start-up, as without keys,
    /// with one message naming the variable, and nothing is requested.
    /// Before, it ran, and every remote request failed as invalid-url.
    @Test func credentialsNoRequestCanCarryAreAUsageError() throws {
        let (origin, urls) = try #require(Self.origin(count: 2))
        let env = ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token\n",
                   "AWS_ENDPOINT_URL": origin.url("/")]
        let result = try CLI().run(["--remote-cache", "s3://bucket/p"] + urls, environment: env)
        #expect(result.status == 2, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stderr.contains("AWS_SESSION_TOKEN holds a control character"), "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: "\n").filter { $0.contains("AWS_SESSION_TOKEN") }.count == 1, "\(result.stderr)")
        #expect(!result.stderr.contains("token"), "the token is never printed: \(result.stderr)")
        #expect(result.stdout.isEmpty && origin.totalRequests == 0)
        let spaced = try CLI().run(["--remote-cache", origin.url("/a b/")] + urls)
        #expect(spaced.status == 2 && spaced.stderr.contains("invalid URL: spaces or control characters"), "\(spaced.stderr)")
        #expect(origin.totalRequests == 0)
    }

    /// `--jobs N` bounds transfers in all (SPEC §6): the origin's requests and the tier's
    /// reads and uploads together, as both servers see them, are never more than N at once,
    /// however slow the tier's PUTs; every URL still ends once and every entry is uploaded.
    /// Before, uploads held no slot and ran min(4, N) at once beside the N downloads (up to
    /// 2N transfers: 4 with `--jobs 2`, 2 with `--jobs 1`).
    @Test(arguments: [1, 2]) func uploadsTakeJobsSlots(jobs: Int) throws {
        final class InFlight: @unchecked Sendable {   // under `lock`: origin and tier requests together
            let lock = NSLock()
            var now = 0, most = 0, uploadsMost = 0, uploads = 0
            func during<T>(upload: Bool = false, seconds: Double, _ answer: () -> T) -> T {
                lock.withLock {
                    now += 1; most = max(most, now)
                    if upload { uploads += 1; uploadsMost = max(uploadsMost, uploads) }
                }
                usleep(UInt32(seconds * 1e6))
                lock.withLock { now -= 1; if upload { uploads -= 1 } }
                return answer()
            }
        }
        let seen = InFlight()
        let origin = try ScriptedServer(), tier = try ScriptedServer()
        var urls: [String] = []
        for n in 0..<8 {
            origin.route("/img/\(n).png", handler: { _ in
                seen.during(seconds: 0.15) {
                    ScriptedResponse.ok(Self.png, headers: [("Content-Type", "image/png"), ("Cache-Control", "max-age=600")])
                }
            })
            urls.append(origin.url("/img/\(n).png"))
            tier.route("/cache/" + (try CLI.md5sum(urls[n])), handler: { request in
                // The tier has nothing yet (a quick 404), and takes its time to store each entry.
                guard request.method == "PUT" else { return seen.during(seconds: 0.02) { ScriptedResponse.status(404) } }
                return seen.during(upload: true, seconds: 0.4) { ScriptedResponse.status(201) }
            })
        }
        let result = try CLI().run(["--json", "--jobs", "\(jobs)", "--remote-cache", tier.url("/cache/")] + urls)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try Self.json(result)
        #expect(Self.successes(lines).count == urls.count, "\(result.stdout)")
        #expect(lines.filter { ["success", "failure", "empty"].contains($0["phase"] as? String) }.count == urls.count,
                "one terminal report per URL: \(result.stdout)")
        let counts = try #require(Self.summary(lines)["remoteCache"] as? [String: Any])
        #expect(counts["uploads"] as? Int == urls.count, "\(counts)")
        let (most, uploadsMost) = seen.lock.withLock { (seen.most, seen.uploadsMost) }
        #expect(most <= jobs, "\(most) transfers at once (origin and tier) with --jobs \(jobs)")
        #expect(uploadsMost >= 1)
    }

    /// A tier that hangs costs the run one read timeout (10 s), then is turned off with a warning
    /// that names it: the reads that started behind the first timeouts are stopped, not each left
    /// to wait for its own. Before, a fifth read started as the first ones timed out (the tier is
    /// turned off at the third), and the run took two timeouts, over 20 s.
    @Test func aHangingRemoteCostsOneTimeoutThenIsLeftAlone() throws {
        let (origin, urls) = try #require(Self.origin(count: 12))
        let tier = try ScriptedServer()
        for url in urls {
            var hang = ScriptedResponse.status(200, body: "late\n")
            hang.delayBeforeHeaders = 60
            tier.route("/cache/" + (try CLI.md5sum(url)), hang)
        }
        let started = Date()
        let result = try CLI().run(["--json", "--jobs", "4", "--remote-cache", tier.url("/cache/")] + urls)
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try Self.json(result)
        #expect(Self.successes(lines).count == 12 && Set(Self.successes(lines).values) == ["network"])
        #expect(origin.totalRequests == 12)
        // One wave of 10 s read timeouts, then the tier is given up: no URL waits for it again.
        #expect(elapsed < 15, "took \(elapsed) s")
        let counts = try #require(Self.summary(lines)["remoteCache"] as? [String: Any])
        #expect(counts["disabled"] as? Bool == true, "\(counts)")
        let warnings = result.stderr.split(separator: "\n").filter { $0.contains("remote cache") }
        #expect(warnings.count == 2, "\(result.stderr)")
        #expect(warnings.last?.contains("remote cache \(tier.url("/cache/")): 3 connection failures or timeouts in a row") == true
                && warnings.last?.hasSuffix("; not used for the rest of this run") == true, "\(result.stderr)")
    }

    /// A tier that refuses everything (403: a wrong key; the same for a 5xx) is turned off once
    /// it has refused `RemoteDefaults.refusalLimit` reads and uploads in a row: one warning names
    /// the tier (without its password) and the status, and the later URLs go straight to their
    /// origin. Before, it was never given up on: every URL paid a GET and a PUT against it.
    @Test func aTierThatRefusesEverythingIsTurnedOff() throws {
        let (origin, urls) = try #require(Self.origin(count: 40))
        let root = try TempDirectory(prefix: "asyncfetch-remote")
        let forbidden = try NginxServer(root: root.path, extraConfig: "location /cache/ { return 403; }")
        let tier = forbidden.url("/cache/").replacingOccurrences(of: "http://", with: "http://user:s3cret@")
        let result = try CLI().run(["--json", "--jobs", "4", "--remote-cache", tier] + urls)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try Self.json(result)
        #expect(Self.successes(lines).count == 40 && Set(Self.successes(lines).values) == ["network"])
        #expect(origin.totalRequests == 40)
        let counts = try #require(Self.summary(lines)["remoteCache"] as? [String: Any])
        #expect(counts["disabled"] as? Bool == true, "\(counts)")
        // Reads alone never turn a tier off (TierHealthTests), and they run ahead of the uploads (up to
        // 32 at once): all 40 may be refused before the third upload is. The uploads tell: at most the
        // refused ones that stop them (`uploadRefusalLimit`) plus the others on their way (fewer than `uploads`,
        // the most at once), where every URL paid a PUT before.
        let asked = forbidden.accessLog().filter { $0.path.hasPrefix("/cache/") }
        let uploads = asked.filter { $0.method == "PUT" }.count
        #expect(uploads <= RemoteDefaults.uploadRefusalLimit + RemoteDefaults.uploads && asked.count < 2 * urls.count, "the tier was asked \(asked.count) times, \(uploads) uploads, for \(urls.count) URLs")
        let off = result.stderr.split(separator: "\n").filter { $0.contains("not used for the rest of this run") }
        let shown = forbidden.url("/cache/").replacingOccurrences(of: "http://", with: "http://user:***@")
        // "N reads and uploads in a row": N is at least 10, as many as were refused when the first upload was.
        #expect(off.count == 1 && off.first?.hasPrefix("asyncfetch: warning: remote cache \(shown): ") == true
                && off.first?.hasSuffix(" reads and uploads in a row refused (the last: HTTP 403 Forbidden); "
                                        + "not used for the rest of this run") == true, "\(result.stderr)")
        #expect(!result.stderr.contains("s3cret"), "\(result.stderr)")
    }

    @Test func theRemoteDyingMidRunLosesNothing() throws {
        let store = try Store()
        let (origin, urls) = try #require(Self.origin(count: 40, delay: 0.03))
        let host = try CLI()
        let nginx = store.nginx
        // The tier goes away once a quarter of the URLs have been downloaded.
        DispatchQueue.global().async {
            for _ in 0..<1000 where origin.totalRequests < 10 { usleep(5_000) }
            nginx.stop()
        }
        let result = try host.run(["--json", "--jobs", "2", "--remote-cache", store.url] + urls)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try Self.json(result)
        #expect(Self.successes(lines).count == 40)
        #expect(origin.totalRequests == 40)
        let tier = try #require(Self.summary(lines)["remoteCache"] as? [String: Any])
        #expect((tier["uploads"] as? Int ?? 0) > 0 && (tier["uploads"] as? Int ?? 0) < 40, "\(tier)")
        #expect(try host.run(["--offline"] + urls).status == 0, "every URL is in the local cache")
    }

    @Test func threeShardsFetchEachURLExactlyOnce() throws {
        let store = try Store()
        let (origin, urls) = try #require(Self.origin(count: 30))
        var seen: [String] = []
        for k in 0..<3 {
            let host = try CLI()
            let result = try host.run(["--json", "--shard", "\(k)/3", "--remote-cache", store.url] + urls)
            #expect(result.status == 0, "\(result.stderr)")
            let mine = Self.successes(try Self.json(result)).keys
            #expect(!mine.isEmpty && mine.count < 30, "shard \(k) took \(mine.count)")
            seen += mine
        }
        #expect(seen.count == 30 && Set(seen) == Set(urls))
        for n in 0..<30 { #expect(origin.requestCount("/img/\(n).png") == 1) }
        #expect(Self.waitForPuts(store, 30) && store.objects().count == 30)
        // A bad shard is a usage error.
        let bad = try CLI().run(["--shard", "3/3", urls[0]])
        #expect(bad.status == 2)
    }

    @Test func credentialsAndNoStoreAreNeverUploaded() throws {
        let store = try Store()
        let origin = try ScriptedServer()
        origin.route("/secret.png", .ok(Self.png, headers: [("Content-Type", "image/png")]))
        origin.route("/private.png", .ok(Self.png, headers: [("Content-Type", "image/png"), ("Cache-Control", "private")]))
        origin.route("/nostore.png", .ok(Self.png, headers: [("Content-Type", "image/png"), ("Cache-Control", "no-store")]))
        let host = try CLI()
        let withUser = origin.url("/secret.png").replacingOccurrences(of: "http://", with: "http://user:pw@")
        #expect(try host.run(["--remote-cache", store.url, withUser]).status == 0)
        #expect(try CLI().run(["--remote-cache", store.url, "-H", "Authorization: Bearer x", origin.url("/secret.png")]).status == 0)
        #expect(try CLI().run(["--remote-cache", store.url, "-H", "Cookie: a=b", origin.url("/secret.png")]).status == 0)
        #expect(try CLI().run(["--remote-cache", store.url, origin.url("/private.png")]).status == 0)
        #expect(try CLI().run(["--remote-cache", store.url, origin.url("/nostore.png")]).status == 0)
        #expect(store.puts() == 0 && store.objects().isEmpty, "\(store.nginx.accessLog())")
        // The same URL without credentials is shared.
        #expect(try CLI().run(["--remote-cache", store.url, origin.url("/secret.png")]).status == 0)
        #expect(Self.waitForPuts(store, 1) && store.objects().count == 1)
    }

    /// A second host's run from the tier reads its objects several at once, as a run from the
    /// origin fetches: the tier's reads take a lane of their own in the batch, not their URL's
    /// origin's slot. Before, they were read one at a time, since an origin the run never
    /// contacts never resolves, and an unresolved host runs one transfer at a time: 10,000 URLs
    /// from an nginx tier took 3.7 times a cold run from the origin nginx (bench/README).
    /// A plain web server serving a tier that others fill, which answers a PUT 404 (no such path for
    /// writing), before any object was read: its uploads stop, with one warning, and its reads go on,
    /// as docs/many-machines.md promises. Before (review12a), that 404 turned the whole tier off as
    /// "the server has no path", and the objects it held later in the run were fetched from the origin.
    @Test func aPlainTierAnsweringPUT404KeepsServingReads() throws {
        let store = try Store()
        let (origin, urls) = try #require(Self.origin(count: 30))
        let held = Array(urls.suffix(10))
        #expect(try CLI().run(["--remote-cache", store.url] + held).status == 0)
        let tier = try ScriptedServer()
        // "Before any object was read": the held objects are served only once the run has said
        // that its uploads stopped (after 8 s at most: shorter than the tier's own 10 s per object,
        // `RemoteDefaults.timeout`, so a hold that ran out fails on `stopped`, not on the origin count). Reads run ahead of uploads, so without
        // this an object could be read first, and the 404s would then be refusals of uploads to a
        // place that exists ("3 uploads in a row refused": the read-only key's case).
        let released = DispatchSemaphore(value: 0)
        for url in held {
            let object = try Array(Data(contentsOf: URL(fileURLWithPath: try store.objectPath(url))))
            tier.route("/cache/" + (try CLI.md5sum(url)), handler: { request in
                guard request.method == "GET" else { return .status(404, body: "no\n") }
                if released.wait(timeout: .now() + 8) == .success { released.signal() }
                return .ok(object)
            })
        }
        let cli = try CLI()
        let run = try startProcess(CLI.binary, ["--json", "--jobs", "2", "--remote-cache", tier.url("/cache/")] + urls,
                                   environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 120)
        let stopped = run.waitForOutput("nothing more is uploaded in this run", inStderr: true, timeout: 8)
        released.signal()
        let result = run.wait()
        #expect(stopped, "\(result.stderr)")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try Self.json(result)
        let sources = Self.successes(lines)
        #expect(sources.count == urls.count && held.allSatisfy { sources[$0] == "remote" }
                && urls.prefix(20).allSatisfy { sources[$0] == "network" }, "\(sources)")
        #expect(origin.totalRequests == 10 + 20, "the held URLs were asked of the origin again")
        let counts = try #require(Self.summary(lines)["remoteCache"] as? [String: Any])
        #expect(counts["disabled"] as? Bool == false && counts["uploadsStopped"] as? Bool == true
                && counts["hits"] as? Int == 10, "\(counts)")
        #expect((counts["reason"] as? String)?.hasPrefix("the server has no path ") == true, "\(counts)")
        #expect(result.stderr.contains("; nothing more is uploaded in this run, reads go on"), "\(result.stderr)")
    }

    @Test func aRunFromTheTierReadsSeveralObjectsAtOnce() throws {
        final class InFlight: @unchecked Sendable {   // under `lock`: the tier's GETs
            let lock = NSLock()
            var now = 0, most = 0
        }
        let store = try Store()
        let (origin, urls) = try #require(Self.origin(count: 8))
        #expect(try CLI().run(["--remote-cache", store.url] + urls).status == 0)
        #expect(store.objects().count == urls.count)
        // The objects the first host uploaded, served by a tier that takes 0.3 s per GET.
        let seen = InFlight()
        let tier = try ScriptedServer()
        for url in urls {
            let object = try Array(Data(contentsOf: URL(fileURLWithPath: try store.objectPath(url))))
            tier.route("/cache/" + (try CLI.md5sum(url)), handler: { _ in
                seen.lock.withLock { seen.now += 1; seen.most = max(seen.most, seen.now) }
                usleep(300_000)
                seen.lock.withLock { seen.now -= 1 }
                return .ok(object)
            })
        }
        let result = try CLI().run(["--json", "--remote-cache", tier.url("/cache/")] + urls)
        #expect(result.status == 0, "\(result.stderr)")
        let sources = Self.successes(try Self.json(result))
        #expect(sources.count == urls.count && Set(sources.values) == ["remote"], "\(result.stdout)")
        #expect(origin.totalRequests == urls.count, "no origin request from the second host")
        let most = seen.lock.withLock { seen.most }
        #expect(most >= 4, "the tier saw at most \(most) GETs at once for \(urls.count) URLs")
    }

    /// Ctrl-C while the tier's lane reads: each URL it started (`loading` sent, its GET at the
    /// tier) was in flight, and is cancelled as a transfer is (`failure`, kind `cancelled`), not
    /// `empty` "cancelled before it started" (SPEC §6); still within a second, no origin asked.
    @Test func sigintDuringTierReadsCancelsThoseURLsAsInFlight() async throws {
        let (origin, urls) = try #require(Self.origin(count: 3))
        let tier = try ScriptedServer()
        for url in urls { tier.route("/cache/" + (try CLI.md5sum(url)), ScriptedResponse.status(404).delayed(20)) }
        let cli = try CLI()
        let child = try startProcess(CLI.binary, ["--json", "--remote-cache", tier.url("/cache/")] + urls,
                                     environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 30)
        for _ in 0..<500 where tier.totalRequests < urls.count { try await Task.sleep(nanoseconds: 20_000_000) }
        #expect(tier.totalRequests == urls.count, "the tier was asked for every URL")
        let probe = PoolLagProbe()
        defer { probe.stop() }
        child.sendSignal(SIGINT)
        let result = try await child.finish()
        #expect(result.status == 130, "\(result.stderr)")
        // SPEC §6: "the exit status is 130 / 143 within a second" (the tier answers after 20 s),
        // plus this machine's scheduling lag meanwhile.
        let seconds = try #require(child.secondsFromSignalToExit), lag = probe.worstLag
        #expect(seconds < 1 + lag, "exited \(seconds) s after SIGINT (lag \(lag) s)")
        let terminal = try Self.json(result).filter { $0["phase"] != nil && $0["phase"] as? String != "loading" }
        #expect(terminal.count == urls.count && Set(terminal.compactMap { $0["url"] as? String }) == Set(urls), "\(result.stdout)")
        let inFlight = terminal.filter {
            $0["phase"] as? String == "failure" && ($0["error"] as? [String: Any])?["kind"] as? String == "cancelled"
        }
        #expect(inFlight.count == urls.count, "\(result.stdout)")
        #expect(origin.totalRequests == 0)
    }

    @Test func aStaleRemoteEntryIsRevalidatedAndTheRefreshGoesBack() throws {
        let store = try Store()
        let origin = try ScriptedServer()
        origin.route("/v.png", handler: { request in
            if request.header("If-None-Match") == "\"v1\"" {
                return ScriptedResponse(status: 304, headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=1")])
            }
            return .ok(Self.png, headers: [("Content-Type", "image/png"), ("ETag", "\"v1\""), ("Cache-Control", "max-age=1")])
        })
        let url = origin.url("/v.png")
        #expect(try CLI().run(["--remote-cache", store.url, url]).status == 0)
        #expect(Self.waitForPuts(store, 1))
        usleep(1_500_000)
        let result = try CLI().run(["--json", "--remote-cache", store.url, url])
        #expect(Self.successes(try Self.json(result))[url] == "revalidated", "\(result.stdout)")
        #expect(origin.requests("/v.png").last?.header("If-None-Match") == "\"v1\"")
        #expect(Self.waitForPuts(store, 2), "the refreshed metadata goes back to the tier")
    }
}

extension WebDAVStore {
    func objects() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path + "/cache")) ?? []).sorted()
    }

    func objectPath(_ url: String) throws -> String { directory.path + "/cache/" + (try CLI.md5sum(url)) }

    func puts() -> Int { nginx.accessLog().filter { $0.method == "PUT" }.count }
}
