import Foundation
import Glibc
import Testing
import TestSupport

/// `--output-dir DIR` (`-P`), `-O`, `--name`, `--link` and `URL<TAB>name`
/// input lines: a batch lands in a folder under readable names, never
/// outside it (issue 16, item 1).
@Suite struct OutputDirectoryE2ETests {
    let server: ScriptedServer
    let cli: CLI
    let png: [UInt8]

    init() throws {
        (server, cli) = try FixtureSite.start()
        png = FixtureSite.png
    }

    func files(_ dir: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: dir)
        var found: [String] = []
        while let name = enumerator?.nextObject() as? String {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: dir + "/" + name, isDirectory: &isDir), !isDir.boolValue { found.append(name) }
        }
        return found.sorted()
    }

    func inode(_ path: String) -> (ino: UInt, links: UInt)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (UInt(info.st_ino), UInt(info.st_nlink))
    }

    @Test func aBatchLandsUnderReadableNamesWithCollisionsNumbered() throws {
        let dir = cli.cache.path + "/photos"
        let urls = ["/images/red-64x48.png", "/images/photo-120x80.jpg", "/images/anim-33x17.gif"].map(server.url)
        server.route("/other/red-64x48.png", ScriptedResponse.ok(png))
        server.route("/", ScriptedResponse.ok(png))
        let list = urls + [server.url("/other/red-64x48.png"), server.url("/")]
        let result = try cli.run(["--json", "-P", dir] + list)
        #expect(result.status == 0, "\(result.stderr)")
        let key = try CacheE2E.key(server.url("/"))
        #expect(files(dir) == ["\(key).png", "anim-33x17.gif", "photo-120x80.jpg", "red-64x48-2.png", "red-64x48.png"].sorted(),
                "the empty name falls back to {md5}.{ext}; the second red-64x48.png is numbered")
        for line in CLI.jsonLines(result.stdout) ?? [] where line["phase"] as? String == "success" {
            let output = try #require(line["output"] as? String)
            let body = try Data(contentsOf: URL(fileURLWithPath: try #require(line["path"] as? String)))
            #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == body, "\(output) is the body byte for byte")
            #expect(["reflink", "copy"].contains(line["outputMethod"] as? String))
            #expect(inode(output)?.ino != inode(line["path"] as! String)?.ino, "a copy, not the cache's file")
        }
        // Running the same batch again gives the same names (files replaced, not numbered anew).
        let again = try cli.run(["-P", dir] + list)
        #expect(again.status == 0)
        #expect(files(dir).count == 5)
        // A copy carries no extended attribute of the cache.
        let attributes = try runProcess("/usr/bin/python3", ["-c", "import os, sys; print(os.listxattr(sys.argv[1]))",
                                                              dir + "/red-64x48.png"])
        #expect(attributes.stdout == "[]\n", "no xattr copied: \(attributes.stdout)\(attributes.stderr)")
    }

    @Test func linkMakesHardLinksAndVerboseSaysWhich() throws {
        let dir = cli.cache.path + "/linked"
        let url = server.url("/images/red-64x48.png")
        let result = try cli.run(["-v", "--link", "--output-dir", dir, url])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("-> \(dir)/red-64x48.png (hard link)"), "\(result.stdout)")
        let cached = cli.cacheDir + "/" + (try CacheE2E.key(url))
        #expect(inode(dir + "/red-64x48.png")?.ino == inode(cached)?.ino, "the same inode: no second copy")
        let copied = try cli.run(["-v", "-P", dir, url])
        #expect(copied.stdout.contains("-> \(dir)/red-64x48.png (reflink)") || copied.stdout.contains("-> \(dir)/red-64x48.png (copy)"),
                "\(copied.stdout)")
    }

    /// docs/output.md: `outputMethod` is `reflink`, `copy` or `hard link`.
    /// `--link` into another file system falls back to a copy; JSON said
    /// "copy (no hard link: Invalid cross-device link)" and `-v` nested
    /// its parentheses. The reason now goes only to `-v`, after a `;`.
    @Test func linkAcrossFileSystemsIsACopyWithTheReasonOnlyForPeople() throws {
        var here = stat(), there = stat()
        guard stat(cli.cache.path, &here) == 0, stat("/dev/shm", &there) == 0,
              here.st_dev != there.st_dev, access("/dev/shm", W_OK) == 0 else { return }
        let outside = "/dev/shm/asyncfetch-link.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: outside) }
        let url = server.url("/images/red-64x48.png")
        let json = try cli.run(["--json", "--link", "-P", outside + "/a", url])
        #expect(json.status == 0, "\(json.stderr)")
        let success = try #require(CLI.jsonLines(json.stdout)?.first { $0["phase"] as? String == "success" })
        #expect(["reflink", "copy"].contains(success["outputMethod"] as? String), "\(success)")
        let verbose = try cli.run(["-v", "--link", "-P", outside + "/b", url])
        #expect(verbose.stdout.contains("-> \(outside)/b/red-64x48.png (copy; no hard link: Invalid cross-device link)")
                || verbose.stdout.contains("-> \(outside)/b/red-64x48.png (reflink; no hard link: Invalid cross-device link)"),
                "\(verbose.stdout)")
    }

    /// `{ext}` of what is not an image (`--any`) follows its content type:
    /// a page at `…/` (no name: `{md5}.{ext}`) was `<md5>.bin`, JSON at
    /// `/api/data` named `{md5}.{ext}` too.
    @Test func theExtensionOfAnythingElseFollowsItsContentType() throws {
        server.route("/site/", .ok(Array("<!doctype html><p>hi</p>".utf8), contentType: "text/html; charset=utf-8"))
        server.route("/api/data", .ok(Array("{\"a\":1}".utf8), contentType: "application/json"))
        let (page, data) = (server.url("/site/"), server.url("/api/data"))
        let pages = try cli.run(["--any", "-P", cli.cache.path + "/pages", page])
        #expect(pages.status == 0, "\(pages.stdout)\(pages.stderr)")
        #expect(files(cli.cache.path + "/pages") == ["\(try CacheE2E.key(page)).html"])
        let named = try cli.run(["--any", "-P", cli.cache.path + "/data", "--name", "{md5}.{ext}", data])
        #expect(named.status == 0, "\(named.stdout)\(named.stderr)")
        #expect(files(cli.cache.path + "/data") == ["\(try CacheE2E.key(data)).json"])
    }

    @Test func templatesAndInputLineNamesStayInsideTheFolder() throws {
        let dir = cli.cache.path + "/out"
        let red = server.url("/images/red-64x48.png")
        let jpg = server.url("/images/photo-120x80.jpg")
        let gif = server.url("/images/anim-33x17.gif")
        let bmp = server.url("/images/bitmap-30x20.bmp")
        let list = "\(red)\t../../escape.png\n\(jpg)\t/etc/abs.jpg\n\(gif)\tsub/dir/with\u{7}bell.gif\n\(bmp)\n"
        let input = try cli.cache.write("list.txt", Array(list.utf8))
        let result = try cli.run(["-P", dir, "-i", input, "--name", "{host}/{md5}.{ext}"])
        #expect(result.status == 0, "\(result.stderr)")
        let host = "127.0.0.1_\(server.port)"
        #expect(files(dir) == ["\(host)/\(try CacheE2E.key(bmp)).bmp", "escape.png", "etc/abs.jpg", "sub/dir/with_bell.gif"],
                "\(files(dir))")
        #expect(!FileManager.default.fileExists(atPath: cli.cache.path + "/escape.png"))

        // A symbolic link inside the folder is never followed.
        let outside = cli.cache.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir + "/trap", withDestinationPath: outside)
        try FileManager.default.createSymbolicLink(atPath: dir + "/red.png", withDestinationPath: outside + "/victim.png")
        let trap = try cli.cache.write("trap.txt", Array("\(red)\ttrap/x.png\n\(jpg)\tred.png\n".utf8))
        let trapped = try cli.run(["-P", dir, "-i", trap])
        #expect(trapped.status == 1)
        #expect(trapped.stdout.contains("trap is not a folder (a symbolic link is never followed)"), "\(trapped.stdout)")
        #expect(files(outside).isEmpty, "nothing written through a symbolic link")
        #expect(inode(dir + "/red.png") != nil && (try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/red.png")) == nil,
                "the link at the final name was replaced by the file")
    }

    @Test func dashOWritesIntoTheCurrentFolderAndBadCombinationsAreUsageErrors() throws {
        let here = cli.cache.path + "/here"
        try FileManager.default.createDirectory(atPath: here, withIntermediateDirectories: true)
        let url = server.url("/images/red-64x48.png")
        let script = "cd \"$1\" && shift && exec \"$0\" \"$@\""
        let result = try runProcess("/bin/bash", ["-c", script, CLI.binary, here, "-O", url],
                                    environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(files(here) == ["red-64x48.png"])
        for arguments in [["-o", "x.png", "-P", here, url], ["--link", url], ["--name", "{nope}", "-P", here, url],
                          ["-P", cli.cacheDir, url]] {
            let bad = try cli.run(arguments)
            #expect(bad.status == 2, "\(arguments): \(bad.stderr)")
        }
        #expect(try cli.run(["--name", "{nope}", "-P", here, url]).stderr.contains("{name}, {host}, {path}, {md5}, {ext}"))
    }

    /// A batch of 1,000 URLs into a folder, as copies and as hard links (the
    /// 10,000-URL figures are in docs/performance.md, measured with the release build).
    @Test func aThousandURLBatchIntoAFolder() throws {
        for index in 1...1000 { server.route("/many/img\(index).png", ScriptedResponse.ok(png, headers: [("Cache-Control", "max-age=600")])) }
        let urls = (1...1000).map { server.url("/many/img\($0).png") }
        let input = try cli.cache.write("many.txt", Array(urls.joined(separator: "\n").utf8))
        #expect(try cli.run(["-q", "-i", input]).status == 0)
        let copies = cli.cache.path + "/copies", links = cli.cache.path + "/links"
        #expect(try cli.run(["-q", "-i", input, "-P", copies]).status == 0)
        #expect(try cli.run(["-q", "-i", input, "-P", links, "--link"]).status == 0)
        #expect(files(copies).count == 1000 && files(links).count == 1000)
        #expect(inode(links + "/img7.png")?.links == 2, "a hard link to the cache's file")
        #expect(inode(copies + "/img7.png")?.links == 1)
    }

    /// `-P` with `…/..%2F..%2Fetc` gave `.._.._etc`: hidden by `ls`, named
    /// after a path it is not in, and without the PNG's extension; a name
    /// without an extension (`…/photo`, `show.php?id=7`) got none either.
    @Test func outputDirectoryNamesAreVisibleAndCarryTheImagesExtension() throws {
        let dir = cli.cache.path + "/photos"
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: Paths.packageRoot + "/Fixtures/images/photo-120x80.jpg"))
        for path in ["/a/..%2F..%2Fetc", "/a/photo", "/a/show.php", "/a/a%2Fb.png", "/a/CAT.JPEG", "/a/cat.png"] {
            server.route(path, path.hasSuffix("JPEG") || path.hasSuffix("cat.png") ? .ok(Array(jpeg), contentType: "image/jpeg") : .ok(png))
        }
        let urls = ["/a/..%2F..%2Fetc", "/a/photo", "/a/show.php?id=7", "/a/a%2Fb.png", "/a/CAT.JPEG", "/a/cat.png"].map(server.url)
        let result = try cli.run(["-P", dir] + urls)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir))?.sorted() ?? []
        #expect(names == ["CAT.JPEG", "a_b.png", "cat.png.jpg", "etc.png", "photo.png", "show.php.png"], "\(names)")
        // A template that names the extension itself, and a name a line gives, are left as they are.
        let list = try cli.cache.write("named.txt", Array("\(server.url("/a/photo"))\tmine\n".utf8))
        let named = try cli.run(["-P", dir + "2", "-i", list])
        let md5 = try cli.run(["-P", dir + "3", "--name", "{md5}.{ext}", server.url("/a/photo")])
        #expect(named.status == 0 && md5.status == 0, "\(named.stderr)\(md5.stderr)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir + "2")) == ["mine"])
        let photoKey = try CacheE2E.key(server.url("/a/photo"))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir + "3")) == [photoKey + ".png"])
    }

    /// A body that could not be renamed into place left its `.part` file in
    /// the folder with nothing said when it could not be removed either
    /// (the unlink's result was dropped). An append-only folder (`chattr +a`:
    /// files may be created, not renamed or removed) shows both.
    @Test func aTemporaryFileThatCannotBeRemovedIsNamed() throws {
        let dir = cli.cache.path + "/appendonly"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let locked = try runProcess("/usr/bin/env", ["chattr", "+a", dir])
        try #require(locked.status == 0, "chattr +a needs root and ext4: \(locked.stderr)")
        defer { _ = try? runProcess("/usr/bin/env", ["chattr", "-a", dir]) }
        let url = server.url("/images/red-64x48.png")
        let result = try cli.run(["--json", "-P", dir, url])
        #expect(result.status == 1)
        let failure = (CLI.jsonLines(result.stdout) ?? []).first { $0["phase"] as? String == "failure" }
        let message = (failure?["error"] as? [String: Any])?["message"] as? String ?? ""
        let left = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        #expect(left.count == 1 && left[0].hasPrefix(".red-64x48.png.") && left[0].hasSuffix(".part"), "\(left)")
        #expect(message.contains("cannot rename into place: Operation not permitted; the temporary file \(left.first ?? "?") "
                                 + "is left behind (cannot remove it: Operation not permitted)"), "\(message)")
    }
}
