#if canImport(Glibc)
import Glibc
#endif
import Loader
import Testing
import TestSupport

/// What a word typed where a URL goes most likely names instead (the tool's
/// hints word it: CommandLineHintsE2ETests).
@Suite struct NonURLWordTests {
    @Test func filesAreToldApartByWhatTheyHold() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-word")
        let list = try temp.write("urls.txt", Array("# my list\nhttps://example.com/a.png\n".utf8))
        let image = try temp.write("cat.png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let empty = try temp.write("empty.txt", [])
        let late = try temp.write("late.txt", Array((String(repeating: "x", count: 5000) + " https://a/b\n").utf8))
        let fifo = temp.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(NonURLWord.file(named: list) == .listFile)
        #expect(NonURLWord.file(named: fifo) == .listFile, "a FIFO is not read: its bytes are the run's")
        #expect(NonURLWord.file(named: image) == .otherFile)
        #expect(NonURLWord.file(named: empty) == .otherFile)
        #expect(NonURLWord.file(named: late) == .otherFile, "only the first 4 KiB are looked at")
        #expect(NonURLWord.file(named: temp.path) == nil, "a directory")
    }

    @Test func missingFilesAndSchemelessURLs() {
        for word in ["no-such-list.txt", "photo.JPG", "no-such-notes.md", "no-such-folder/cat.png", "/tmp/nowhere/photo.jpg", "./list.csv"] {
            #expect(NonURLWord.file(named: word) == .missingFile, "\(word)")
        }
        for word in ["example.com/cat.png", "img.example.com", "version", "host:8080/x", "example.com"] {
            #expect(NonURLWord.file(named: word) == nil, "\(word)")
        }
        for word in ["example.com/cat.png", "img.example.com:8080/a", "example.com"] {
            #expect(NonURLWord.schemeless(word) == .schemelessURL, "\(word)")
        }
        for word in ["version", ".hidden/x", "photos/cat.png", "bücher.example/x", ""] {
            #expect(NonURLWord.schemeless(word) == nil, "\(word)")
        }
    }
}
