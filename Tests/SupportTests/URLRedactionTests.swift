import Support
import Testing

@Suite struct URLRedactionTests {
    @Test func redactionOnlyTouchesThePassword() {
        #expect(redactURL("http://127.0.0.1/a@b.png") == "http://127.0.0.1/a@b.png")
        #expect(redactURL("https://user@host/x") == "https://user@host/x")
        #expect(redactURL("https://user:pw@host/x?y=1@2") == "https://user:***@host/x?y=1@2")
        #expect(redactURL("https://us%40er:p:w@host:8443/") == "https://us%40er:***@host:8443/")
        #expect(redactURL("not a url @ all") == "not a url @ all")
    }

    @Test func schemeSeparatorIsTheFirstColonSlashSlash() {
        let url = "https://host/a://b"
        #expect(schemeSeparator(in: url).map { String(url[$0]) } == "://")
        #expect(schemeSeparator(in: url)?.lowerBound == url.firstIndex(of: ":"))
        #expect(schemeSeparator(in: "host/a://b") == nil)
        #expect(schemeSeparator(in: "mailto:x@y") == nil)
        #expect(schemeSeparator(in: "http:/x") == nil)
        #expect(schemeSeparator(in: "") == nil)
    }
}
