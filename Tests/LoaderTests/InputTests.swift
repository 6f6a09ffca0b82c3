import Fetch
import Foundation
import Loader
import Support
import Testing
import TestSupport

/// URL lists without a binary: the line rules of `--input`, reading a file
/// ahead, sharding and `URL<TAB>name` lines.
@Suite struct InputTests {
    /// Every URL line `LineSplitter` finds in `text` fed in chunks of `chunk` bytes.
    static func split(_ text: String, chunk: Int = 1 << 16, maxLineBytes: Int = 1 << 20) -> [String] {
        var splitter = LineSplitter(maxLineBytes: maxLineBytes)
        var lines: [String] = []
        func take(_ line: LineSplitter.Line) {
            switch line {
            case .text(let bytes): lines.append(String(decoding: bytes, as: UTF8.self))
            case .overlong(let number): lines.append("<overlong \(number)>")
            }
        }
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + chunk)
            bytes[start..<end].withUnsafeBufferPointer { splitter.feed($0, take) }
            start = end
        }
        splitter.finish(take)
        return lines
    }

    @Test func blankLinesCommentsAndWhitespaceAreSkipped() {
        let text = "\u{FEFF}https://a/1\r\n\n   \n# a comment\n\thttps://a/2  \r\n  # indented comment\nhttps://a/3"
        let expected = ["https://a/1", "https://a/2", "https://a/3"]
        #expect(Self.split(text) == expected)
        // The same URLs whichever way the bytes arrive (a pipe hands them over in pieces).
        for chunk in [1, 2, 3, 7] { #expect(Self.split(text, chunk: chunk) == expected, "chunks of \(chunk)") }
    }

    @Test func aByteOrderMarkCountsOnlyOnTheFirstLine() {
        #expect(Self.split("https://a/1\n\u{FEFF}x") == ["https://a/1", "\u{FEFF}x"])
    }

    @Test func tabsStayInsideALine() {
        // `URL<TAB>name`: the splitter keeps the tab; `GivenNames` takes it apart.
        #expect(Self.split("https://a/1\tcat.png\n") == ["https://a/1\tcat.png"])
    }

    @Test func anOverlongLineIsReportedByNumberNotKept() {
        let long = String(repeating: "x", count: 40)
        for chunk in [1, 5, 64] {
            #expect(Self.split("https://a/1\n\(long)\nhttps://a/3\n\(long)", chunk: chunk, maxLineBytes: 16)
                    == ["https://a/1", "<overlong 2>", "https://a/3", "<overlong 4>"], "chunks of \(chunk)")
        }
    }

    @Test func givenNamesSplitTheURLFromItsName() {
        let names = GivenNames()
        #expect(names.split("https://user:secret@a/1.png\tfirst.png") == "https://user:secret@a/1.png")
        #expect(names.split("https://user:secret@a/1.png\tsecond.png") == "https://user:secret@a/1.png")
        #expect(names.split("https://a/2.png\t") == "https://a/2.png")
        #expect(names.split("https://a/3.png") == "https://a/3.png")
        // Keyed by the URL as reported (password removed); the first name stays.
        #expect(names.name(for: redactURL("https://user:secret@a/1.png")) == "first.png")
        #expect(names.name(for: "https://a/2.png") == nil)
    }

    @Test func shardsPartitionAListTheSameWayEveryTime() throws {
        let urls = (0..<300).map { "https://example.com/image-\($0).png" }
        let shards = (0..<4).map { Shard(index: $0, count: 4) }
        var owners: [Int] = []
        for url in urls {
            let mine = shards.filter { $0.contains(url) }
            #expect(mine.count == 1, "\(url) in exactly one shard")
            owners.append(mine.first?.index ?? -1)
        }
        // The key, not the order or the process, decides: shuffled, the same owners.
        for (url, owner) in zip(urls, owners).shuffled() { #expect(shards[owner].contains(url)) }
        // Every shard gets a share of 300 URLs.
        for shard in 0..<4 { #expect(owners.filter { $0 == shard }.count > 30) }
        // A URL without a key belongs to shard 0, which reports it.
        #expect(shards[0].contains("not a url") && !shards[1].contains("not a url"))
        #expect(Shard(index: 0, count: 1).contains("not a url"))
    }

    @Test func shardArgumentsAreKOfN() {
        #expect(Shard(argument: "2/5") == Shard(index: 2, count: 5))
        #expect(Shard(argument: "0/1") == Shard(index: 0, count: 1))
        for bad in ["5/5", "-1/3", "1/0", "1", "1/2/3", "a/b", ""] { #expect(Shard(argument: bad) == nil, "\(bad)") }
    }

    @Test func inputLinesReadAFileAheadAndCountIt() async throws {
        let temp = try TempDirectory(prefix: "asyncfetch-input")
        let urls = (0..<3000).map { "https://a/\($0)" }
        let path = try temp.write("urls.txt", Array(("# list\n" + urls.joined(separator: "\r\n") + "\n").utf8))
        let lines = try InputLines(path: path)
        #expect(lines.name == path)
        lines.countAhead()
        var read: [String] = []
        for await line in lines { read.append(line) }
        #expect(read == urls)
        #expect(lines.progress.read == 3000 && lines.progress.total == 3000)
        #expect(lines.readError == nil)
        #expect(try InputLines.readAll(path: path) { "overlong \($0)" } == urls)
    }

    @Test func aListThatCannotBeReadNamesItsPath() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-input")
        let directory = try #require(throws: LoadError.self) { try InputLines(path: temp.path) }
        #expect(directory.kind == .io && directory.path == temp.path)
        #expect(directory.message == "cannot read --input \(temp.path): is a directory")
        let absent = try #require(throws: LoadError.self) { try InputLines(path: temp.file("absent")) }
        #expect(absent.message == "cannot read --input \(temp.file("absent")): No such file or directory")
        let absentAtOnce = try #require(throws: LoadError.self) { try InputLines.readAll(path: temp.file("absent")) { _ in "" } }
        #expect(absentAtOnce.kind == .io && absentAtOnce.path == temp.file("absent"))
        #expect(absentAtOnce.message == "cannot read --input \(temp.file("absent")): No such file or directory")
    }

    @Test func aURLListTakesArgumentsThenEachInputFilteredByShardWithNames() async throws {
        let temp = try TempDirectory(prefix: "asyncfetch-input")
        let fileURLs = (0..<200).map { "https://b/\($0)" }
        let first = try temp.write("one.txt", Array(fileURLs[..<100].map { "\($0)\tname-\($0.split(separator: "/").last!)" }.joined(separator: "\n").utf8))
        let second = try temp.write("two.txt", Array(fileURLs[100...].joined(separator: "\n").utf8))
        let arguments = ["https://a/1", "https://a/2"]
        let names = GivenNames()
        let shard = Shard(index: 1, count: 3)
        let list = URLList(arguments: arguments, inputs: [try InputLines(path: first), try InputLines(path: second)],
                           names: names, shard: shard)
        var iterator = list.makeAsyncIterator()
        var taken: [String] = []
        while true {
            let chunk = await iterator.nextChunk(limit: 7)
            if chunk.isEmpty { break }
            #expect(chunk.count <= 7)
            taken += chunk
        }
        #expect(taken == (arguments + fileURLs).filter { shard.contains($0) })
        #expect(names.name(for: "https://b/5") == "name-5")
        #expect(list.progress.total == 202)
    }
}
