import HTTPCaching
import Testing

/// RFC 9111 §4.1's normalisations of a selecting header value, without I/O.
@Suite struct VaryNormalizationUnitTests {
    @Test func listsLoseTheirOptionalWhitespace() {
        #expect(VaryNormalization.normalize(" 1, 2 ", name: "Foo") == "1, 2")
        #expect(VaryNormalization.normalize("1,2", name: "Foo") == "1, 2")
        #expect(VaryNormalization.normalize("1,,2,", name: "Foo") == "1, 2")
        #expect(VaryNormalization.normalize("\"a, b\",c", name: "Foo") == "\"a, b\", c")   // a quoted comma does not split
        #expect(VaryNormalization.normalize("\"a,b\",c", name: "Foo") == "\"a,b\", c")     // (split, it would gain a space)
        #expect(VaryNormalization.normalize("B, a", name: "Foo") == "B, a")               // unknown header: case and order kept
    }

    @Test func acceptHeadersIgnoreCaseOrderAndTheDefaultWeight() {
        #expect(VaryNormalization.normalize("en, de", name: "Accept-Language") == VaryNormalization.normalize("De,EN", name: "accept-language"))
        #expect(VaryNormalization.normalize("gzip;q=1.0, br", name: "Accept-Encoding") == "br, gzip")
        #expect(VaryNormalization.normalize("fr ; q=0.50", name: "Accept-Language") == "fr;q=0.5")
        #expect(VaryNormalization.normalize("en;q=0.5", name: "Accept-Language") != VaryNormalization.normalize("en;q=0.6", name: "Accept-Language"))
    }

    @Test func theFirstChoiceOfAcceptLanguage() {
        #expect(VaryNormalization.firstChoice(ofAcceptLanguage: "fr;q=0.5, de;q=1.0", is: "de"))
        #expect(VaryNormalization.firstChoice(ofAcceptLanguage: "de, en", is: "de"))
        #expect(VaryNormalization.firstChoice(ofAcceptLanguage: "de", is: "de-AT"))       // a range matches its subtags
        #expect(!VaryNormalization.firstChoice(ofAcceptLanguage: "en, de", is: "de"))     // a tie goes to the first
        #expect(!VaryNormalization.firstChoice(ofAcceptLanguage: "de-AT", is: "de"))
        #expect(!VaryNormalization.firstChoice(ofAcceptLanguage: "de;q=0", is: "de"))    // q=0: not acceptable
        #expect(!VaryNormalization.firstChoice(ofAcceptLanguage: "", is: "de"))
    }

    @Test func statusTables() {
        #expect(!StatusCacheability.understood.contains(299) && !StatusCacheability.understood.contains(599))
        // RFC 9110 §15.1's list, exactly; every one of them understood.
        let heuristic = (0...999).filter(StatusCacheability.isHeuristicallyCacheable)
        #expect(heuristic == [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501])
        #expect(heuristic.allSatisfy(StatusCacheability.understood.contains))
    }
}
