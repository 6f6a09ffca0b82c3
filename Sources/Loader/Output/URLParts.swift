/// The host, path and last path segment of a URL (no query, no fragment).
public struct URLParts: Sendable, Equatable {
    public var host = ""
    public var path = ""
    public var lastSegment = ""

    public init(_ url: String) {
        var rest = Substring(url)
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        host = authority.lowercased().replacing(":", with: "_")
        path = String(rest[slash...].drop(while: { $0 == "/" }))
        lastSegment = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
    }
}
