import DiskCache
import Fetch
import Support

/// `cache list`'s line for one stored entry, for people or as JSON (SPEC
/// §3): `fresh  2026-11-22 00:11:33     4.2 KiB  image/png  URL`. Pure text,
/// no I/O; whether an entry is fresh is the caller's (HTTPCaching's) answer.
public enum CacheEntryLine {
    /// The content-type column's width: its longest value, at most `Defaults.listTypeColumnMax`.
    public static func typeWidth(_ entries: [CacheEntry]) -> Int {
        min(Defaults.listTypeColumnMax, entries.map { shownType($0.metadata).count }.max() ?? 0)
    }

    public static func human(_ entry: CacheEntry, fresh: Bool, typeWidth: Int) -> String {
        let meta = entry.metadata
        let size = meta.hasBody ? HumanUnits.bytes(meta.bodyLength) : "HTTP \(meta.status)"
        let type = shownType(meta)
        let sizeColumn = String(repeating: " ", count: max(0, 10 - size.count)) + size
        let typeColumn = type + String(repeating: " ", count: max(0, typeWidth - type.count))
        return "\(fresh ? "fresh" : "stale")  \(HumanUnits.humanTimestamp(meta.storedAt))  \(sizeColumn)  \(typeColumn)  \(ShownText.of(listedURL(meta.url, key: entry.keyDigest)))"
    }

    /// A broken entry (`cache stats` counts them, `cache verify` removes
    /// them): `broken -` where the time goes, its bytes on disk, `-` for the
    /// type, its URL when its record could be read (else its path), and why.
    public static func human(broken scanned: DiskCacheStore.ScannedEntry, path: String, typeWidth: Int) -> String {
        let size = HumanUnits.bytes(scanned.bytes)
        let sizeColumn = String(repeating: " ", count: max(0, 10 - size.count)) + size
        let typeColumn = "-" + String(repeating: " ", count: max(0, typeWidth - 1))
        let name = scanned.url.map { ShownText.of(listedURL($0, key: MD5.Digest(hex: scanned.key))) } ?? ShownText.of(path)
        let timeColumn = "-" + String(repeating: " ", count: 18)   // as wide as "2026-11-22 00:11:33"
        return "broken \(timeColumn)  \(sizeColumn)  \(typeColumn)  \(name)  (\(scanned.problem ?? "broken"))"
    }

    /// A broken entry as JSON: `url` (absent when its record could not be
    /// read), `path`, `bytes` on disk, `fresh` (never), and `broken`: why.
    /// `storedAt` and `contentType` are absent, as unknown fields are.
    public static func json(broken scanned: DiskCacheStore.ScannedEntry, path: String) -> String {
        var line = JSONLine()
        line.add("url", scanned.url.map { listedURL($0, key: MD5.Digest(hex: scanned.key)) })
        line.add("path", path)
        line.add("bytes", scanned.bytes)
        line.add("fresh", false)
        line.add("broken", scanned.problem ?? "broken")
        return line.rendered
    }

    /// An entry's URL as the results showed it when it was fetched: a record
    /// keeps no password (`http://user@host/a`), but an entry whose key is not
    /// the MD5 of its recorded URL was fetched with one, and is shown
    /// `http://user:***@host/a`, as `redactURL` shows it everywhere else.
    static func listedURL(_ url: String, key: MD5.Digest?) -> String {
        let shown = redactURL(url)
        guard let key, shown == url, let at = userInfoEnd(url), MD5.digest(url) != key else { return shown }
        return String(url[..<at]) + ":***" + String(url[at...])
    }

    /// Where the user info of `url` ends (its `@`), when it has one without a password.
    private static func userInfoEnd(_ url: String) -> String.Index? {
        guard let authority = urlAuthority(in: url), let at = authority.lastIndex(of: "@"), !authority[..<at].contains(":") else { return nil }
        return at
    }

    /// The content-type column: `-` for none; a server's control
    /// characters as escapes, as the result lines show them.
    private static func shownType(_ meta: CacheMetadata) -> String {
        ContentTypeLabel.of(meta.header("Content-Type")).map(ShownText.of) ?? "-"
    }

    public static func json(_ entry: CacheEntry, fresh: Bool) -> String {
        let meta = entry.metadata
        var line = JSONLine()
        line.add("url", listedURL(meta.url, key: entry.keyDigest))
        line.add("path", meta.hasBody ? entry.bodyPath : nil)
        line.add("bytes", meta.bodyLength)
        line.add("storedAt", HumanUnits.isoTimestamp(meta.storedAt))
        line.add("fresh", fresh)
        line.add("contentType", ContentTypeLabel.of(meta.header("Content-Type")))
        line.add("status", meta.status)
        return line.rendered
    }
}
