import DiskCache
import Foundation
import ImageFormats
@testable import Loader
import Testing
import TestSupport

/// `--output-dir` without a binary: the names (pure) and the placing of files.
@Suite struct OutputTests {
    static let md5 = "0123456789abcdef0123456789abcdef"

    static func name(_ url: String, template: String = OutputName.defaultTemplate, given: String? = nil,
                     format: ImageFormat? = nil) -> String {
        OutputName(template: template).components(url: url, given: given, md5: md5, format: format).joined(separator: "/")
    }

    @Test func theSniffedFormatGivesTheExtension() {
        // A JPEG is saved as .jpg: the typed format carries its file extension.
        #expect(OutputName.fileExtension(format: .jpeg, name: "photo") == "jpg")
        #expect(OutputName.fileExtension(format: .png, name: "photo.jpeg") == "png")
        #expect(OutputName.fileExtension(format: nil, name: "photo.webp") == "webp")
        #expect(OutputName.fileExtension(format: nil, name: "archive.tar-gz") == "bin")
        #expect(OutputName.fileExtension(format: nil, name: "README") == "bin")
        // Not an image (--any): the content type, before the name's own.
        #expect(OutputName.fileExtension(format: nil, contentType: "Text/HTML; charset=utf-8", name: "") == "html")
        #expect(OutputName.fileExtension(format: nil, contentType: "application/json", name: "data.php") == "json")
        #expect(OutputName.fileExtension(format: nil, contentType: "image/jpeg", name: "x") == "jpg")
        #expect(OutputName.fileExtension(format: .png, contentType: "text/html", name: "x") == "png")
        #expect(OutputName.fileExtension(format: nil, contentType: "application/octet-stream", name: "a.webp") == "webp")
        #expect(OutputName.fileExtension(format: nil, contentType: "application/x-unknown", name: "") == "bin")
        #expect(Self.name("https://a/x/photo", template: "{md5}.{ext}", format: .jpeg) == "\(Self.md5).jpg")
    }

    @Test func templatesExpandFromTheURL() {
        let url = "https://User:pw@Example.COM:8443/a/b/cat.png?size=2#top"
        #expect(Self.name(url) == "cat.png")
        #expect(Self.name(url, template: "{host}/{path}") == "example.com_8443/a/b/cat.png")
        #expect(Self.name(url, template: "{host}-{md5}.{ext}", format: .gif) == "example.com_8443-\(Self.md5).gif")
        let parts = URLParts(url)
        #expect(parts.host == "example.com_8443" && parts.path == "a/b/cat.png" && parts.lastSegment == "cat.png")
        #expect(OutputName.problem(with: "{host}/{name}") == nil)
        // A name with nothing left under {host}/: the key names the file inside the host's folder.
        #expect(Self.name("http://h/", template: "{host}/{name}", format: .png) == "h/\(Self.md5).png")
        #expect(Self.name("http://h/..%2F", template: "{host}/{name}", format: .png) == "h/\(Self.md5).png")
        #expect(Self.name("http://h/", format: .png) == "\(Self.md5).png")
        #expect(OutputName.problem(with: "{size}.png")?.contains("unknown {variable}") == true)
    }

    @Test func namesStayInsideTheDirectory() {
        #expect(Self.name("https://a/x", given: "../../etc/passwd") == "etc/passwd")
        #expect(Self.name("https://a/x", given: "/abs/./name") == "abs/name")
        // A separator decoding brings in joins the pieces, a way up among them dropped.
        #expect(Self.name("https://a/x", given: "a%2F..%2Fb") == "a_b")
        #expect(Self.name("https://a/..%2F..%2Fetc", format: .png) == "etc.png")
        #expect(Self.name("https://a/photo.php?id=7", format: .png) == "photo.php.png")
        #expect(Self.name("https://a/CAT.JPEG", format: .jpeg) == "CAT.JPEG")
        #expect(Self.name("https://a/x", given: "tab\there\\back") == "tab_here_back")
        #expect(Self.name("https://a/%41%42.png") == "AB.png")
        // Nothing left: the key and the extension.
        #expect(Self.name("https://a/", format: .png) == "\(Self.md5).png")
        #expect(Self.name("https://a/x", given: "..") == "\(Self.md5).bin")
    }

    @Test func longComponentsAreShortenedKeepingTheExtension() {
        let long = String(repeating: "é", count: 200) + ".png"
        let short = OutputName.shortened(long)
        #expect(short.utf8.count <= OutputName.maxComponentBytes && short.hasSuffix(".png"))
        #expect(OutputDirectory.numbered("cat.png", 2) == "cat-2.png")
        #expect(OutputDirectory.numbered("README", 3) == "README-3")
        #expect(OutputDirectory.numbered(".hidden", 2) == ".hidden-2")
    }

    @Test func bodiesArePlacedUnderUniqueNamesAndNeverOutside() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-output")
        let body = try temp.write("cache/body", Array("image bytes".utf8))
        let folder = try OutputDirectory(path: temp.file("out"), name: OutputName(template: "{name}"))
        let result = LoadResult(path: nil, source: .network, bytes: 11, status: 200, contentType: "image/png", format: .png,
                                width: nil, height: nil, attempts: 1, httpVersion: nil, redirects: 0, effectiveURL: nil)
        let first = try folder.receive(url: "https://a/cat.png", body: body, result: result)
        let second = try folder.receive(url: "https://b/cat.png", body: body, result: result)
        let again = try folder.receive(url: "https://a/cat.png", body: body, result: result)
        #expect(first.path == temp.file("out/cat.png"))
        #expect(second.path == temp.file("out/cat-2.png"))
        #expect(again.path == first.path, "the same URL keeps its name")
        #expect(["reflink", "copy"].contains(first.method))
        #expect(try String(contentsOfFile: second.path, encoding: .utf8) == "image bytes")
        // A symbolic link inside the directory is never followed.
        try FileManager.default.createDirectory(atPath: temp.file("elsewhere"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: temp.file("out/link"), withDestinationPath: temp.file("elsewhere"))
        let named = try OutputDirectory(path: temp.file("out"), name: OutputName(template: "link/{name}"))
        #expect(throws: (any Error).self) { try named.receive(url: "https://a/dog.png", body: body, result: result) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.file("elsewhere")).isEmpty)
    }

    @Test func theCacheDirectoryIsRefused() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-output")
        try FileManager.default.createDirectory(atPath: temp.file("cache"), withIntermediateDirectories: true)
        let cache = try #require(throws: LoadError.self) {
            try OutputDirectory(path: temp.file("cache/."), cacheDirectory: temp.file("cache"))
        }
        #expect(cache.kind == .usage && cache.path == temp.file("cache/."))
        #expect(cache.message == "--output-dir \(temp.file("cache/.")) is the cache directory; its files there would "
                + "replace cache entries (a folder inside it is fine)")
        let absent = try #require(throws: LoadError.self) { try OutputDirectory(path: temp.file("absent/out")) }
        #expect(absent.kind == .io && absent.path == temp.file("absent/out"))
        #expect(absent.message == "cannot create --output-dir \(temp.file("absent/out")): No such file or directory")
    }
}
