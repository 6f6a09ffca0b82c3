import DiskCache
import Glibc
import ImageFormats
@testable import Loader
import Testing

/// A result's fields read back as given, whichever of them a result has,
/// and a cache hit's result is one block small enough for glibc's lock-free
/// fast bins (a batch's consumer frees it on another thread than made it).
@Suite struct LoadResultStorageTests {
    private func hit(format: ImageFormat?, status: Int?, width: Int?, height: Int?) -> LoadResult {
        LoadResult(stored: .entry(directory: "/var/tmp/cache", key: MD5.digest("http://a.test/x.png")), source: .cache,
                   bytes: 1234, status: status, contentType: "image/png", format: format, width: width, height: height,
                   attempts: 0, httpVersion: nil, redirects: 0, effectiveURL: nil)
    }

    @Test func aCacheHitIsOneFastBinBlock() throws {
        // malloc.h's, which the Glibc module leaves out.
        typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
        let usableSize = unsafeBitCast(try #require(dlsym(nil, "malloc_usable_size")), to: UsableSize.self)
        // A block can be handed out larger than asked for (a free block split
        // with too little left over): the smallest of many is the size asked for.
        let results = (0..<64).map { _ in
            var result = hit(format: .png, status: 200, width: 64, height: 60)
            result.reason = ImageLoader.offlineReason
            return result
        }
        let limit = results[0].boxObject.limit
        let size = results.map { usableSize(Unmanaged.passUnretained($0.boxObject.object).toOpaque()) }.min() ?? 0
        #expect(size <= limit, "a hit's box is \(size) bytes, more than a fast bin's \(limit)")
    }

    @Test func everyFormatAndAbsentNumberReadsBack() {
        for format in ImageFormat.all + [nil] {
            for (status, width, height) in [(200, 1, 2), (nil, nil, nil), (599, 0, Int.max), (100, 70_000, nil)] as [(Int?, Int?, Int?)] {
                let result = hit(format: format, status: status, width: width, height: height)
                #expect(result.format == format)
                #expect(result.status == status && result.width == width && result.height == height)
                #expect(result.bytes == 1234 && result.contentType == "image/png" && result.source == .cache)
                #expect(result.attempts == 0 && result.httpVersion == nil && result.redirects == 0 && result.reason == nil)
                #expect(result.path == "/var/tmp/cache/" + MD5.digest("http://a.test/x.png").hex)
            }
        }
    }

    /// A stored entry's result (`hitPhase`: the record's format name, no
    /// request) reads back as the general initializer's with the format
    /// made of that name: every format, a name of none, none; and a blank
    /// `Content-Type` is none, whatever its first byte.
    @Test func aStoredEntrysResultReadsBackAsTheGeneralOne() {
        let key = MD5.digest("http://a.test/x.png")
        for name in ImageFormat.all.map(\.name) + ["PNG", "pn", "pngx", "", nil] as [String?] {
            for contentType in ["image/png", " image/png", "\timage/x", "", " ", " \t ", nil] as [String?] {
                let stored = LoadResult(stored: .entry(directory: "/c", key: key), source: .stale, bytes: 7, status: 203,
                                        contentType: contentType, formatName: name, width: 5, height: nil)
                let general = LoadResult(stored: .entry(directory: "/c", key: key), source: .stale, bytes: 7, status: 203,
                                         contentType: contentType, format: name.flatMap(ImageFormat.init(name:)), width: 5,
                                         height: nil, attempts: 0, httpVersion: nil, redirects: 0, effectiveURL: nil)
                #expect(stored.format == general.format && stored.contentType == general.contentType)
                #expect(stored.format?.name == (ImageFormat.all.contains { $0.name == name } ? name : nil))
                #expect(stored.path == general.path && stored.source == .stale && stored.bytes == 7 && stored.status == 203)
                #expect(stored.width == 5 && stored.height == nil && stored.attempts == 0 && stored.redirects == 0)
                #expect(stored.httpVersion == nil && stored.effectiveURL == nil && stored.checked == nil && stored.reason == nil)
            }
        }
        #expect(LoadResult(stored: .entry(directory: "/c", key: key), source: .cache, bytes: 1, status: 200,
                           contentType: " \t", formatName: "gif", width: nil, height: nil).contentType == nil)
    }

    @Test func aDownloadsFieldsReadBackAndChangesKeepTheRest() {
        var result = LoadResult(path: "/tmp/out.gif", source: .network, bytes: 9, status: 206, contentType: nil, format: .gif,
                                width: 3, height: 4, attempts: 2, httpVersion: "1.1", redirects: 1,
                                effectiveURL: "http://b.test/y.gif", warning: "w", checked: .structure)
        result.reason = "stale-if-error"
        result.receipt = DeliveryReceipt(path: "/tmp/o", method: "copy")
        result.storeFailure = "disk full"
        result.attempts = 3
        #expect(result.path == "/tmp/out.gif" && result.source == .network && result.bytes == 9 && result.status == 206)
        #expect(result.contentType == nil && result.format == .gif && result.width == 3 && result.height == 4)
        #expect(result.attempts == 3 && result.httpVersion == "1.1" && result.redirects == 1)
        #expect(result.effectiveURL == "http://b.test/y.gif" && result.warning == "w" && result.checked == .structure)
        #expect(result.reason == "stale-if-error" && result.receipt == DeliveryReceipt(path: "/tmp/o", method: "copy"))
        #expect(result.storeFailure == "disk full")
        result.warning = nil
        result.attempts = 0
        #expect(result.warning == nil && result.attempts == 0 && result.httpVersion == "1.1" && result.reason == "stale-if-error")
    }
}
