import Foundation
import Fetch
import Support
import Testing
import TestSupport

/// Request headers a library user gives: refused before any I/O when they
/// cannot be sent (a line break would inject another header), sent as
/// written otherwise, the empty value included; removed ones not at all.
@Suite(.timeLimit(.minutes(3))) struct FetchRequestHeaderTests {
    @Test func theRuleKnowsLineBreaksNulAndNamesThatAreNotTokens() {
        #expect(HTTPHeaders.problem(name: "X-Token", value: "abc def") == nil)
        #expect(HTTPHeaders.problem(name: "X-Empty", value: "") == nil)
        #expect(HTTPHeaders.problem(name: "X-A", value: "1\r\nX-B: 2") == .lineBreak)
        #expect(HTTPHeaders.problem(name: "X-A", value: "1\nX-B: 2") == .lineBreak)
        #expect(HTTPHeaders.problem(name: "X-A", value: "1\0") == .lineBreak)
        #expect(HTTPHeaders.problem(name: "X-A\r\nX-B", value: "2") == .lineBreak)
        #expect(HTTPHeaders.problem(name: "", value: "x") == .emptyName)
        #expect(HTTPHeaders.problem(name: "Bad Name", value: "x") == .invalidName)
        #expect(HTTPHeaders.problem(name: "Host:evil", value: "x") == .invalidName)
    }

    @Test func fieldsCheckedAsTheyAreMadeAreCheckedAgainOnceOneIsAdded() {
        var headers = HTTPHeaders(sendable: [HTTPHeaders.Field(name: "If-None-Match", value: "\"a\"\r\nX-B: 2"),
                                              HTTPHeaders.Field(name: "X-Ok", value: "1"), HTTPHeaders.Field(name: "Bad Name", value: "x")])
        #expect(headers.map(\.name) == ["X-Ok"], "only the fields that can be sent")
        #expect(headers.firstProblem() == nil)
        headers.set(name: "X-Set", value: "a\0")
        #expect(headers.firstProblem()?.problem == .lineBreak)
        headers.remove(name: "X-Set")
        #expect(headers.firstProblem() == nil)
        headers.add(name: "", value: "x")
        #expect(headers.firstProblem()?.problem == .emptyName)
    }

    @Test func aConfigurationWithAnInjectedHeaderIsRefusedWithAReadableError() {
        var configuration = FetchConfiguration()
        #expect(throws: Never.self) { try configuration.validate() }
        configuration.headers.add(name: "X-Token", value: "abc\r\nX-Admin: 1")
        #expect {
            try configuration.validate()
        } throws: { error in
            let error = error as? FetchError
            return error?.kind == .invalidURL && error?.attempts == 0 && error?.url == ""
                && error?.description == "invalid request header 'X-Token': a line break (CR or LF) or NUL would end the header and start another"
        }
        configuration.headers = HTTPHeaders()
        configuration.userAgent = "bot/1\r\nX-Admin: 1"
        #expect(throws: FetchError.self) { try configuration.validate() }
        configuration.userAgent = ""
        configuration.removedHeaders = ["Bad Name"]
        #expect(throws: FetchError.self) { try configuration.validate() }
    }

    /// Nothing reaches the server: not the injected line, not the request.
    @Test func injectedHeadersFailEveryRequestBeforeAnyIO() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Array("png".utf8)))
        let configured = try FetchHarness { $0.headers.add(name: "X-A", value: "1\r\nX-B: 2") }
        let fromConfiguration = try await configured.fetch(server.url("/a.png"))
        #expect(fromConfiguration.error?.kind == .invalidURL)
        #expect(fromConfiguration.error?.message.hasPrefix("invalid request header 'X-A': a line break") == true)
        #expect(fromConfiguration.error?.attempts == 0)
        let plain = try FetchHarness()
        let fromRequest = try await plain.fetch(server.url("/a.png"), headers: ["X-A": "1\nX-B: 2"])
        #expect(fromRequest.error?.kind == .invalidURL)
        #expect(fromRequest.error?.description == server.url("/a.png")
            + ": invalid request header 'X-A': a line break (CR or LF) or NUL would end the header and start another")
        let badName = try await plain.fetch(server.url("/a.png"), headers: ["Host:evil": "x"])
        #expect(badName.error?.message == "invalid request header 'Host:evil': a name is letters, digits and !#$%&'*+-.^_`|~ only")
        let agent = try FetchHarness { $0.userAgent = "bot\r\nX-B: 2" }
        #expect(try await agent.fetch(server.url("/a.png")).error?.kind == .invalidURL)
        #expect(server.requests("/a.png").isEmpty)
    }

    /// libcurl drops "Name:" with nothing after the colon: an empty value
    /// must still be sent (HTTP allows it), and a removed header must not be,
    /// even one libcurl sends by default.
    @Test func anEmptyValueIsSentAndARemovedHeaderIsNot() async throws {
        let server = try ScriptedServer()
        server.route("/e.png", .ok(Array("png".utf8)))
        let harness = try FetchHarness {
            $0.headers.add(name: "X-Empty", value: "")
            $0.removedHeaders = ["Accept", "user-agent", "Accept-Encoding", "X-Never"]
        }
        #expect(try await harness.fetch(server.url("/e.png"), headers: ["X-Also-Empty": ""]).response?.status == 200)
        let request = try #require(server.requests("/e.png").first)
        #expect(request.header("X-Empty") == "")
        #expect(request.header("X-Also-Empty") == "")
        #expect(request.header("Accept") == nil)
        #expect(request.header("User-Agent") == nil)
        #expect(request.header("Accept-Encoding") == nil)
        #expect(request.header("X-Never") == nil)
        // A request header of a removed name is sent all the same.
        #expect(try await harness.fetch(server.url("/e.png"), headers: ["Accept": "image/png"]).response?.status == 200)
        #expect(server.requests("/e.png").last?.header("Accept") == "image/png")
    }

    /// A GET's request head, field by field, as curl sends it: libcurl's Host, User-Agent
    /// (CURLOPT_USERAGENT) and Accept, then our lines (the client's fields, the request's, the
    /// codings offered), each once.
    @Test func aRequestHeadHasEachFieldOnceInItsOrder() async throws {
        let server = try ScriptedServer()
        server.route("/o.png", .ok(Array("png".utf8)))
        func names(_ request: RecordedRequest) -> [String] { request.headers.map { $0.name.lowercased() } }
        let plain = try FetchHarness()
        #expect(try await plain.fetch(server.url("/o.png")).response?.status == 200)
        let first = try #require(server.requests("/o.png").last)
        #expect(names(first) == ["host", "user-agent", "accept", "accept-encoding"], "\(first.headers)")
        #expect(first.headerValues("User-Agent") == [Defaults.userAgent] && first.header("Accept") == "*/*")
        #expect(first.header("Accept-Encoding") == Defaults.acceptEncoding)

        let configured = try FetchHarness {
            $0.userAgent = "bot/2 (+https://example.invalid)"
            $0.headers.add(name: "X-Token", value: "t")
        }
        #expect(try await configured.fetch(server.url("/o.png"), headers: ["X-Asked": "1"]).response?.status == 200)
        let second = try #require(server.requests("/o.png").last)
        #expect(names(second) == ["host", "user-agent", "accept", "x-token", "x-asked", "accept-encoding"], "\(second.headers)")
        #expect(second.headerValues("User-Agent") == ["bot/2 (+https://example.invalid)"])
        // A request's own User-Agent replaces the client's; the client's -H one replaces `userAgent`.
        #expect(try await configured.fetch(server.url("/o.png"), headers: ["user-agent": "mine/1"]).response?.status == 200)
        #expect(server.requests("/o.png").last?.headerValues("User-Agent") == ["mine/1"])
        let byHeader = try FetchHarness { $0.headers.add(name: "User-Agent", value: "by-header/1") }
        #expect(try await byHeader.fetch(server.url("/o.png")).response?.status == 200)
        #expect(server.requests("/o.png").last?.headerValues("User-Agent") == ["by-header/1"])
        // A blank `userAgent` is sent as libcurl writes it ("User-Agent:" and the blanks).
        let blank = try FetchHarness { $0.userAgent = " " }
        #expect(try await blank.fetch(server.url("/o.png")).response?.status == 200)
        #expect(server.requests("/o.png").last?.headerValues("User-Agent").count == 1)
    }

    /// An empty `userAgent` sends none, as curl's `-A ''`.
    @Test func anEmptyUserAgentSendsNone() async throws {
        let server = try ScriptedServer()
        server.route("/u.png", .ok(Array("png".utf8)))
        let harness = try FetchHarness { $0.userAgent = "" }
        #expect(try await harness.fetch(server.url("/u.png")).response?.status == 200)
        #expect(server.requests("/u.png").first?.header("User-Agent") == nil)
    }
}
