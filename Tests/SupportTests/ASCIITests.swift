import Support
import Testing

@Suite struct TrimWhitespaceTests {
    @Test(arguments: [("", ""), ("a", "a"), ("  a  ", "a"), ("\ta b\t", "a b"), ("   ", ""), (" é ", "é"), ("x\t", "x"), ("\u{A0}x", "\u{A0}x")])
    func trimsSpacesAndTabsOnly(input: String, expected: String) {
        #expect(trimWhitespace(input) == expected)
        #expect(trimWhitespace(Substring(input)) == expected)
    }

    @Test func lowerTrimsThenLowercases() {
        #expect(trimWhitespaceLower(" \tNo-Cache ") == "no-cache")
        #expect(trimWhitespaceLower("ÉTAG") == "étag")
    }
}
