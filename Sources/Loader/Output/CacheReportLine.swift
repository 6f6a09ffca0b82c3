import DiskCache
import Support

/// The lines of the cache's maintenance commands (SPEC §7): `cache stats`,
/// each entry `cache verify` removed, and the summary of `verify`, `prune`
/// and `clear` (what went, what is left, the leftovers of killed runs
/// swept); `cache list`'s are `CacheEntryLine`'s. Pure
/// text, no I/O: the reports are DiskCache's, the printing is the caller's.
/// Public: the tool prints these, and a program that maintains a cache
/// through `DiskCacheStore` can print the same.
public enum CacheReportLine {
    /// `removed  URL  reason` (the key when the entry's URL is unknown).
    public static func removed(_ removal: DiskCacheStore.VerifyReport.Removal) -> String {
        "removed  \(removal.url.map { ShownText.of(redactURL($0)) } ?? removal.key)  \(removal.reason)"
    }

    /// `kept     PATH  ...`: a file named like a key that has no metadata, which
    /// the cache never leaves, so `verify` does not remove it; the line says how to.
    public static func unowned(_ path: String) -> String {
        "kept     \(path)  no metadata: not written by asyncfetch, so left alone (rm it if it is not yours either)"
    }

    /// `unreadable  URL-or-PATH  Permission denied: ...`: an entry `verify`
    /// may not read, so cannot judge: kept, and the line says what to do.
    public static func unreadable(_ entry: DiskCacheStore.VerifyReport.Removal, path: String) -> String {
        "unreadable  \(entry.url.map { ShownText.of(redactURL($0)) } ?? ShownText.of(path))  \(entry.reason): "
            + "not checked, so kept (give this user read access, or rm it)"
    }

    /// `verified 12 entries: 11 intact, 1 corrupt removed`, with what
    /// changed while checking, outdated sidecars and the sweep.
    public static func verified(_ report: DiskCacheStore.VerifyReport) -> String {
        var summary = "verified \(report.checked) \(plural(report.checked, "entry", "entries")): "
            + "\(report.intact) intact, \(report.removed.count) corrupt removed"
        if report.changed > 0 { summary += ", \(report.changed) changed while checking (kept)" }
        if !report.unreadable.isEmpty { summary += ", \(report.unreadable.count) unreadable (kept)" }
        if report.straySidecars > 0 {
            summary += ", \(report.straySidecars) outdated \(plural(report.straySidecars, "sidecar", "sidecars")) removed"
        }
        if !report.unowned.isEmpty {
            summary += ", \(report.unowned.count) \(plural(report.unowned.count, "file", "files")) without metadata kept"
        }
        return summary + swept(report.sweep)
    }

    /// `removed 3 entries (1.2 MiB); 9 entries (4.0 MiB) remain` (with `and 1
    /// partial download (1.9 MiB)` after the entries when kept partial bodies
    /// went too), and the sweep.
    public static func pruned(_ report: DiskCacheStore.PruneReport) -> String {
        "removed \(report.removed) \(plural(report.removed, "entry", "entries")) "
            + "(\(HumanUnits.bytes(report.removedBytes)))"
            + (report.partials == 0 ? "" : " and \(report.partials) \(plural(report.partials, "partial download", "partial downloads")) "
                + "(\(HumanUnits.bytes(report.partialBytes)))")
            + "; \(report.remaining) "
            + "\(plural(report.remaining, "entry", "entries")) (\(HumanUnits.bytes(report.remainingBytes))) "
            + plural(report.remaining, "remains", "remain")
            + (report.unreadable == 0 ? "" : ", \(report.unreadable) of them unreadable by this user and kept "
                + "(cache verify names them)")
            + swept(report.sweep)
    }

    /// `removed 12 entries (4.0 MiB) from DIR`, the sweep, and how many could not be removed.
    public static func cleared(_ report: DiskCacheStore.PruneReport, directory: String) -> String {
        var line = "removed \(report.removed) \(plural(report.removed, "entry", "entries")) "
            + "(\(HumanUnits.bytes(report.removedBytes))) from \(directory)" + swept(report.sweep)
        if !report.failures.isEmpty { line += "; \(report.failures.count) could not be removed" }
        return line
    }

    /// `cache stats`: the directory, entries and size, then broken entries
    /// and temporary files when there are any.
    public static func stats(_ scan: DiskCacheStore.Scan, directory: String) -> [String] {
        let broken = scan.entries.count - scan.intact.count
        var lines = ["directory  \(directory)", "entries    \(scan.intact.count)",
                     "size       \(HumanUnits.bytes(scan.bytes)) (\(scan.bytes) bytes)"]
        if broken > 0 { lines.append("broken     \(broken) (misses; 'asyncfetch cache verify' removes them)") }
        if scan.temporaryFiles > 0 {
            lines.append("temporary  \(scan.temporaryFiles) files, \(HumanUnits.bytes(scan.temporaryBytes)) (downloads in progress or leftovers)")
        }
        if !scan.partials.isEmpty {
            lines.append("partial    \(scan.partials.count) \(plural(scan.partials.count, "file", "files")), "
                         + "\(HumanUnits.bytes(scan.partialBytes)) (cut-off downloads kept to be resumed)")
        }
        return lines
    }

    /// `cache stats --json`: one object, `{"entries":…,"bytes":…,"dir":…,"broken":…,"temporaryFiles":…,"partialFiles":…}`.
    public static func statsJSON(_ scan: DiskCacheStore.Scan, directory: String) -> String {
        var line = JSONLine()
        line.add("entries", scan.intact.count)
        line.add("bytes", scan.bytes)
        line.add("dir", directory)
        line.add("broken", scan.entries.count - scan.intact.count)
        line.add("temporaryFiles", scan.temporaryFiles)
        line.add("partialFiles", scan.partials.count)
        return line.rendered
    }

    // MARK: - JSON (`--json` of verify, prune and clear)

    /// `cache verify --json`: one object per entry acted on or named, then
    /// the summary. An entry: `action` (`removed`: corrupt, and gone;
    /// `unreadable`: not checked, kept; `kept`: a file without metadata,
    /// not the cache's), `key` (absent for `kept`), `url` when its record
    /// could be read, `path`, `reason`, and `bytes` for a removal. The last
    /// line is `{"summary":{…}}`: `checked`, `intact`, `removed`, `changed`,
    /// `unreadable`, `kept`, `straySidecars`, the sweep's fields and `failures`.
    public static func verifiedJSON(_ report: DiskCacheStore.VerifyReport, directory: String) -> [String] {
        var lines: [String] = []
        for removal in report.removed { lines.append(entryJSON("removed", removal, directory: directory, bytes: removal.bytes)) }
        for entry in report.unreadable { lines.append(entryJSON("unreadable", entry, directory: directory, bytes: nil)) }
        for path in report.unowned {
            var line = JSONLine()
            line.add("action", "kept")
            line.add("path", path)
            line.add("reason", "no metadata: not written by asyncfetch")
            lines.append(line.rendered)
        }
        var summary = JSONLine()
        summary.add("checked", report.checked)
        summary.add("intact", report.intact)
        summary.add("removed", report.removed.count)
        summary.add("removedBytes", report.removed.reduce(Int64(0)) { $0 + $1.bytes })
        summary.add("changed", report.changed)
        summary.add("unreadable", report.unreadable.count)
        summary.add("kept", report.unowned.count)
        summary.add("straySidecars", report.straySidecars)
        addSweep(report.sweep, failures: report.failures.count, to: &summary)
        lines.append(wrapped(summary))
        return lines
    }

    /// `cache prune --json`: one line, `{"summary":{…}}` with `removed`,
    /// `removedBytes`, `partials`, `partialBytes`, `remaining`,
    /// `remainingBytes`, `unreadable`, the sweep's fields and `failures`.
    public static func prunedJSON(_ report: DiskCacheStore.PruneReport) -> String {
        wrapped(pruneSummary(report))
    }

    /// `cache clear --json`: `prunedJSON`'s line with `dir`.
    public static func clearedJSON(_ report: DiskCacheStore.PruneReport, directory: String) -> String {
        var summary = pruneSummary(report)
        summary.add("dir", directory)
        return wrapped(summary)
    }

    private static func pruneSummary(_ report: DiskCacheStore.PruneReport) -> JSONLine {
        var summary = JSONLine()
        summary.add("removed", report.removed)
        summary.add("removedBytes", report.removedBytes)
        summary.add("partials", report.partials)
        summary.add("partialBytes", report.partialBytes)
        summary.add("remaining", report.remaining)
        summary.add("remainingBytes", report.remainingBytes)
        summary.add("unreadable", report.unreadable)
        addSweep(report.sweep, failures: report.failures.count, to: &summary)
        return summary
    }

    private static func entryJSON(_ action: String, _ entry: DiskCacheStore.VerifyReport.Removal,
                                  directory: String, bytes: Int64?) -> String {
        var line = JSONLine()
        line.add("action", action)
        line.add("key", entry.key)
        line.add("url", entry.url.map(redactURL))
        line.add("path", directory + "/" + entry.key)
        line.add("reason", entry.reason)
        line.add("bytes", bytes)
        return line.rendered
    }

    /// `swept`, `sweptBytes`, `temporaryKept` (still being written) and
    /// `failures` (files that should have gone but could not be removed; stderr names them).
    private static func addSweep(_ sweep: DiskCacheStore.SweepReport, failures: Int, to line: inout JSONLine) {
        line.add("swept", sweep.removed)
        line.add("sweptBytes", sweep.removedBytes)
        line.add("temporaryKept", sweep.kept)
        line.add("failures", failures + sweep.failures.count)
    }

    private static func wrapped(_ summary: JSONLine) -> String {
        var line = JSONLine()
        line.add("summary", object: summary)
        return line.rendered
    }

    /// "; swept 3 leftover temporary files (1.2 MiB)", or "" when there were none.
    static func swept(_ sweep: DiskCacheStore.SweepReport) -> String {
        var text = ""
        if sweep.removed > 0 {
            text += "; swept \(sweep.removed) leftover temporary \(plural(sweep.removed, "file", "files")) (\(HumanUnits.bytes(sweep.removedBytes)))"
        }
        if sweep.kept > 0 {
            text += "; kept \(sweep.kept) temporary \(plural(sweep.kept, "file", "files")) still being written"
        }
        return text
    }

    private static func plural(_ n: Int, _ one: String, _ many: String) -> String { n == 1 ? one : many }
}
