import Foundation
import Testing
import TestSupport

/// A cache on a file system without user extended attributes (ramfs,
/// mounted by the test): the directory keeps its metadata in sidecars
/// (`<md5>.meta`, two-file protocol) and everything works as on ext4.
@Suite struct SidecarE2ETests {
    @Test(.enabled(if: CacheE2E.canMount, "needs mount -t ramfs (root in a VM or privileged container)"))
    func aFileSystemWithoutExtendedAttributesKeepsSidecars() throws {
        let (server, cli) = try FixtureSite.start()
        let mount = try TmpfsMount(at: cli.cache.path + "/ramfs", size: "", type: "ramfs")
        defer { mount.unmount() }
        let env = ["ASYNCFETCH_CACHE_DIR": mount.path + "/cache"]
        let dir = mount.path + "/cache"
        let urls = CacheE2ETests.images.map { server.url($0) }

        let cold = try cli.run(["--json"] + urls, environment: env)
        #expect(cold.status == 0, "\(cold.stdout)\(cold.stderr)")
        #expect(try String(contentsOfFile: dir + "/.asyncfetch-store", encoding: .utf8) == "metadata=sidecar\n")
        let keys = try urls.map { try CacheE2E.key($0) }
        for key in keys {
            #expect(FileManager.default.fileExists(atPath: dir + "/" + key))
            let meta = try #require(CacheE2E.metadata(dir + "/" + key + ".meta"), "a sidecar for \(key)")
            #expect(meta["body-inode"] != nil, "a sidecar names its body's inode")
        }
        let requests = server.totalRequests
        let warm = try cli.run(urls, environment: env)
        #expect(warm.status == 0 && warm.stdout.components(separatedBy: "(cache,").count == 4, "\(warm.stdout)")
        #expect(server.totalRequests == requests, "fresh hits need no network")
        let offline = try cli.run(["--offline"] + urls, environment: env)
        #expect(offline.status == 0, "\(offline.stdout)")
        let refresh = try cli.run(["--refresh"] + urls, environment: env)
        #expect(refresh.status == 0, "\(refresh.stderr)")
        #expect(try cli.run(["cache", "verify"], environment: env).stdout.contains(" 0 corrupt removed"))
        #expect(CacheE2E.files(in: dir + "/.tmp").isEmpty)

        let rm = try cli.run(["cache", "rm", urls[0]], environment: env)
        #expect(rm.status == 0)
        #expect(!FileManager.default.fileExists(atPath: dir + "/" + keys[0]))
        #expect(!FileManager.default.fileExists(atPath: dir + "/" + keys[0] + ".meta"))
        #expect(try cli.run(["cache", "clear"], environment: env).stdout.hasPrefix("removed 2 entries"))
        #expect(CacheE2E.files(in: dir) == [".asyncfetch-store"])
    }
}
