/// Removes the password from a URL's userinfo (`https://user:secret@host/`
/// becomes `https://user:***@host/`), so that no output ever shows it.
public func redactURL(_ url: String) -> String {
    guard let schemeEnd = schemeSeparator(in: url) else { return url }
    let afterScheme = url[schemeEnd.upperBound...]
    let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? afterScheme.endIndex
    let authority = afterScheme[..<authorityEnd]
    guard let at = authority.lastIndex(of: "@") else { return url }
    let userinfo = authority[..<at]
    guard let colon = userinfo.firstIndex(of: ":") else { return url }
    return String(url[..<colon]) + ":***" + String(url[at...])
}

/// The range of the first "://" in `url`, found without Foundation.
public func schemeSeparator(in url: String) -> Range<String.Index>? {
    var index = url.startIndex
    while index < url.endIndex {
        if url[index] == ":" {
            let rest = url[url.index(after: index)...]
            if rest.hasPrefix("//") {
                return index..<url.index(index, offsetBy: 3)
            }
            return nil
        }
        if url[index] == "/" || url[index] == "?" || url[index] == "#" { return nil }
        index = url.index(after: index)
    }
    return nil
}
