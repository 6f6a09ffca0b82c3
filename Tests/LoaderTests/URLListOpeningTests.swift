import Loader
import Testing
import TestSupport

/// Opening a run's `--input` lists, and reading a short one whole (the
/// `cache` commands): every list that cannot be read is named, not only the
/// first; arguments and lines are read as a run reads them.
@Suite(.timeLimit(.minutes(3))) struct URLListOpeningTests {
    @Test func everyListThatCannotBeOpenedIsNamedInOrder() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-open")
        let good = try temp.write("urls.txt", Array("https://a/1\n".utf8))
        let (opened, unreadable) = URLList.open(inputs: [temp.file("absent-a"), good, temp.path, temp.file("absent-b")])
        #expect(opened.map(\.path) == [good])
        #expect(unreadable.map(\.path) == [temp.file("absent-a"), temp.path, temp.file("absent-b")])
        #expect(unreadable.allSatisfy { $0.kind == .io })
        #expect(unreadable.map(\.message) == ["cannot read --input \(temp.file("absent-a")): No such file or directory",
                                              "cannot read --input \(temp.path): is a directory",
                                              "cannot read --input \(temp.file("absent-b")): No such file or directory"])
        let none = URLList.open(inputs: [])
        #expect(none.opened.isEmpty && none.unreadable.isEmpty)
    }

    @Test func readAllTakesArgumentsThenListsAsARunReadsThem() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-open")
        let first = try temp.write("a.txt", Array("# comment\nhttps://a/1\n\n  https://a/2\tname.png  \n".utf8))
        let second = try temp.write("b.txt", Array("https://b/1\n".utf8))
        let urls = try URLList.readAll(arguments: [" https://arg/1 ", "https://arg/2"], inputs: [first, second])
        #expect(urls == ["https://arg/1", "https://arg/2", "https://a/1", "https://a/2", "https://b/1"])
        let error = try #require(throws: LoadError.self) {
            try URLList.readAll(arguments: [], inputs: [first, temp.file("absent")])
        }
        #expect(error.kind == .io && error.path == temp.file("absent"))
    }
}
