import DiskCache

extension CacheReportLine {
    /// Every line of `cache verify` for `report` of the cache in `directory`:
    /// each entry removed, each file kept because it has no metadata, each
    /// entry this user may not read, then the summary; `json`: `verifiedJSON`.
    public static func verifiedLines(_ report: DiskCacheStore.VerifyReport, directory: String, json: Bool) -> [String] {
        if json { return verifiedJSON(report, directory: directory) }
        return report.removed.map(removed) + report.unowned.map(unowned)
            + report.unreadable.map { unreadable($0, path: directory + "/" + $0.key) } + [verified(report)]
    }
}
