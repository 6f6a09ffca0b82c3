import Support
import Testing

/// The "Did you mean" rule (`NearestName`) on a command line's option names.
@Suite struct NearestNameTests {
    static let names: Set<String> = ["jobs", "json", "jobs-per-host", "verbose", "refresh", "retries", "max-size",
                                     "max-age", "input", "insecure"]

    @Test func oneSlipIsTheNameMeant() {
        #expect(NearestName.nearest(to: "jbos", among: Self.names) == "jobs")     // two neighbours swapped
        #expect(NearestName.nearest(to: "refesh", among: Self.names) == "refresh") // a letter missing
        #expect(NearestName.nearest(to: "JSON", among: Self.names) == "json")     // in lower case
        #expect(NearestName.nearest(to: "max-sise", among: Self.names) == "max-size")
    }

    @Test func nothingCloseIsNoGuess() {
        #expect(NearestName.nearest(to: "bogus", among: Self.names) == nil)       // 3 edits from jobs
        #expect(NearestName.nearest(to: "jobz", among: ["jobs", "jobx"]) == nil)  // two as close
        #expect(NearestName.nearest(to: "", among: Self.names) == nil)
    }

    @Test func twoSlipsOnlyInALongWord() {
        #expect(NearestName.nearest(to: "insecuer", among: Self.names) == "insecure")  // a swap, 8 letters
        #expect(NearestName.nearest(to: "rtrieis", among: Self.names) == "retries")    // two edits, 7 letters
        #expect(NearestName.nearest(to: "ipt", among: ["input"]) == nil)               // two edits, 3 letters
    }

    @Test func theOnlyNameStartingWithWhatWasTyped() {
        #expect(NearestName.nearest(to: "verb", among: Self.names) == "verbose")
        #expect(NearestName.nearest(to: "max", among: Self.names) == nil)   // max-size and max-age
        #expect(NearestName.nearest(to: "ve", among: ["verbose"]) == nil)   // fewer than 3 letters
    }

    @Test func distanceCountsASwapAsOneEdit() {
        #expect(NearestName.distance(Array("jobs"), Array("jbos")) == 1)
        #expect(NearestName.distance(Array("jobs"), Array("json")) == 3)
        #expect(NearestName.distance(Array(""), Array("abc")) == 3)
        #expect(NearestName.distance(Array("kitten"), Array("sitting")) == 3)
    }
}
