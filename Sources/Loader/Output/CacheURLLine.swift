import DiskCache
import Fetch
import Support

/// One URL's line in `cache path` and `cache rm` (SPEC §7), and `cache
/// pull`'s lines. Each URL asked gets one line on stdout, in order, human or
/// JSON, so a script can pair the lines with what it asked; a URL that was
/// not there also gets a complaint for stderr. Pure text: the outcome comes
/// from `CacheURLLine+Store` (or the caller), the printing is the caller's.
public struct CacheURLLine: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        /// `cache path`: the entry's body.
        case cached(path: String)
        /// `cache path`: a remembered error status (SPEC §5), stored without
        /// a body: there is an answer, but no path to give.
        case withoutBody(status: Int)
        /// `cache path`: the URL's entry is there but broken (`problem`, as
        /// `cache list` says it): no body to give until `cache verify`
        /// removes it and a run fetches it again.
        case broken(problem: String)
        /// `cache rm`: the entry is gone.
        case removed
        case notCached
        case invalid
        /// `cache rm`: the entry could not be removed.
        case failed(message: String)
    }

    public let url: String
    public let outcome: Outcome

    public init(url: String, outcome: Outcome) {
        self.url = url
        self.outcome = outcome
    }

    /// No body (not cached, only a remembered error, or not a URL): the command exits 1.
    public var isMissing: Bool {
        switch outcome {
        case .notCached, .invalid, .withoutBody, .broken: true
        case .cached, .removed, .failed: false
        }
    }

    /// For stderr: `asyncfetch: URL: not cached` (or `invalid URL`, or
    /// `cached as HTTP 404 Not Found, no body`); nil when the body was there.
    public var complaint: String? {
        switch outcome {
        case .notCached: "asyncfetch: \(shownURL): not cached" + (Self.namesUserWithoutPassword(url) ? Self.passwordHint : "")
        case .invalid: "asyncfetch: \(shownURL): invalid URL"
        case .withoutBody(let status):
            "asyncfetch: \(shownURL): cached as HTTP \(status) \(HTTPStatus.reason(status)), no body"
        case .broken(let problem):
            "asyncfetch: \(shownURL): " + ShownText.of(EmptyReason.brokenSentence(problem))
        case .cached, .removed, .failed: nil
        }
    }

    /// `cache path`: the body's path, or `-`; JSON `{"url","cached","path"}`
    /// (`cached`: a body is there) with a `reason` when not, the `status`
    /// of a remembered error, and why a broken entry is (`broken`).
    public func pathLine(json: Bool) -> String {
        let path: String? = if case .cached(let path) = outcome { path } else { nil }
        guard json else { return path ?? "-" }
        return jsonLine { line in
            line.add("cached", path != nil)
            line.add("path", path)
            if path == nil { line.add("reason", reason) }
            if case .withoutBody(let status) = outcome { line.add("status", status) }
            if case .broken(let problem) = outcome { line.add("broken", problem) }
        }
    }

    /// `cache rm`: `removed  URL`, `absent   URL`, `invalid  URL` or
    /// `failed   URL`; JSON `{"url","removed"}` with a `reason` (and the
    /// `message` of a failure) when not removed.
    public func removalLine(json: Bool) -> String {
        if json {
            return jsonLine { line in
                line.add("removed", outcome == .removed)
                if outcome != .removed { line.add("reason", reason) }
                if case .failed(let message) = outcome { line.add("message", message) }
            }
        }
        let word = switch outcome {
        case .removed, .cached, .withoutBody: "removed"
        case .notCached, .broken: "absent "
        case .invalid: "invalid"
        case .failed: "failed "
        }
        return word + "  " + shownURL
    }

    /// Why a URL as `cache list` shows it (`http://user:***@host/…`: the
    /// password is never stored) may find nothing: an entry fetched with a
    /// password is keyed by the whole URL, password included (docs/cache.md).
    static let passwordHint = " (an entry fetched with a password is kept under the URL with its password, "
        + "which cache list shows as ***: name the URL with it)"

    /// Whether `url` names a user as `cache list` may show one: without a
    /// password (`http://user@host/…`) or with it hidden (`user:***@`).
    static func namesUserWithoutPassword(_ url: String) -> Bool {
        guard let authority = urlAuthority(in: url), let at = authority.lastIndex(of: "@") else { return false }
        let userInfo = authority[..<at]
        return !userInfo.contains(":") || userInfo.hasSuffix(":***")
    }

    /// The URL as a person's line shows it: password removed, control
    /// characters as escapes (a list's line may hold them; JSON escapes
    /// them its own way).
    private var shownURL: String { Self.shown(url) }

    private static func shown(_ url: String) -> String { ShownText.of(redactURL(url)) }

    /// `cache pull`: an entry copied from the remote tier.
    public static func pulled(_ url: String) -> String { "pulled   \(shown(url))" }

    /// `cache pull`, for stderr: a URL the remote tier does not have, or
    /// one a fetch refuses before any I/O (`invalid URL`, as `cache path`
    /// says: no cache holds it, and the tier was not asked).
    public static func notInRemote(_ url: String) -> String {
        guard (try? FetchClient.validate(url)) != nil else { return "asyncfetch: \(shown(url)): invalid URL" }
        return "asyncfetch: \(shown(url)): not in the remote cache"
    }

    /// `cache pull`, for stderr: a URL not pulled because the remote tier
    /// failed (not because it lacks the object): it could not be read, or it
    /// is turned off for the run (`turnedOff`: a bucket that does not exist,
    /// or failures in a row; its warning says why). The hint that `-v` shows
    /// every error only when there is one to show (`errors`: counted so far):
    /// a tier turned off by its bucket's listing counts none.
    public static func remoteFailed(_ url: String, verbose: Bool, turnedOff: Bool = false, errors: Int = 1) -> String {
        "asyncfetch: \(shown(url)): not pulled: "
            + (turnedOff ? "the remote cache is turned off for this run" : "the remote cache could not be read")
            + (verbose || errors == 0 ? "" : " (-v shows every remote cache error)")
    }

    /// `cache pull`'s closing line, for stderr; `turnedOff`: why the tier was
    /// turned off, if it was (the warning may be long gone from the screen).
    public static func pullSummary(pulled: Int, present: Int, notPulled: Int, remoteMisses: Int, remoteErrors: Int,
                                   turnedOff: String? = nil) -> String {
        "\(pulled) pulled, \(present) already cached, \(notPulled) not pulled"
            + " (remote cache: \(remoteMisses) misses, \(remoteErrors) errors" + (turnedOff.map { ", turned off: \($0)" } ?? "") + ")"
    }

    private var reason: String {
        switch outcome {
        case .cached, .removed, .notCached, .broken: "not-cached"
        case .invalid: "invalid-url"
        case .withoutBody: "no-body"
        case .failed: "io"
        }
    }

    private func jsonLine(_ fill: (inout JSONLine) -> Void) -> String {
        var line = JSONLine()
        line.add("url", redactURL(url))
        fill(&line)
        return line.rendered
    }
}
