import DiskCache
import Fetch
import HTTPCaching
import ImageDecoding
import RemoteCache
import Support

extension ImageLoader {
    /// The network path with the remote tier in front of the origin: a local
    /// miss asks the tier first; an intact fresh object is the answer (source
    /// `remote`), a stale one is revalidated with the origin like a local
    /// entry. What the origin sends (a download, a 304) is then uploaded in
    /// the background, unless it must not be shared (`TierSharing`).
    /// `handedOut`: see `network`. `uploadSlots`: where the upload takes its
    /// transfer slot (a batch's `HostDispatch`: `--jobs` bounds uploads too).
    func tiered(url: String, key: CacheKey, entry: CacheEntry?, gate: (any FetchAttemptGate)? = nil,
                handedOut: Bool = false, uploadSlots: (any UploadSlots)? = nil) async -> Phase {
        guard let remote = options.remote else {
            return await network(url: url, key: key, entry: entry, gate: gate, handedOut: handedOut)
        }
        var base = entry
        if base == nil {
            switch await askTier(remote, key: key) {
            case .answered(let phase): return phase
            case .origin(let stale): base = stale
            }
        }
        return await afterTier(remote, url: url, key: key, entry: base, gate: gate, handedOut: handedOut, uploadSlots: uploadSlots)
    }

    /// What the remote tier did for a URL with nothing stored locally.
    enum TierAnswer: Sendable {
        /// An intact, fresh object: the URL's answer (source `remote`).
        case answered(Phase)
        /// The origin is to be asked, revalidating the tier's stale object if there is one.
        case origin(CacheEntry?)
    }

    /// Asks the tier for `key` (a URL with nothing stored locally): `tierAnswer` of its read.
    func askTier(_ remote: RemoteCache, key: CacheKey) async -> TierAnswer {
        tierAnswer(await remote.read(key, into: cache), key: key)
    }

    /// What the tier's `read` of `key` means for the URL: an intact, fresh
    /// object answers it; the origin is asked otherwise (revalidating a stale
    /// object). Synchronous: a batch runs it where the read completed, on the
    /// tier client's completion worker (`BatchLoads`, in the tier's lane of
    /// its scheduler, `ImageLoader.tierLane`), and then queues what the tier
    /// did not answer for its origin.
    func tierAnswer(_ read: RemoteCache.Read, key: CacheKey) -> TierAnswer {
        guard case .stored(let fetched) = read, varyMatches(fetched), tierObjectDecodes(fetched, key: key) else {
            return .origin(nil)
        }
        if !options.refresh, options.freshness.isFresh(fetched.metadata, now: currentUnixTime()) {
            return .answered(hitPhase(fetched, source: .remote))
        }
        return .origin(fetched)
    }

    /// The origin's part of a tiered load (the tier asked already): what the
    /// origin sends (a download, a 304) is then uploaded in the background,
    /// unless it must not be shared (`TierSharing`).
    func afterTier(_ remote: RemoteCache, url: String, key: CacheKey, entry: CacheEntry?, gate: (any FetchAttemptGate)?,
                   handedOut: Bool, uploadSlots: (any UploadSlots)?) async -> Phase {
        let phase = await network(url: url, key: key, entry: entry, gate: gate, handedOut: handedOut)
        share(phase, url: url, key: key, with: remote, uploadSlots: uploadSlots)
        return phase
    }

    /// Queues the upload of what the origin sent for `url` (`phase`: a
    /// download or a 304 stored), unless it must not be shared (`TierSharing`:
    /// a URL fetched with credentials is never queued; a record marked
    /// `private` or `no-store` is not sent, judged when its PUT looks the entry
    /// up, the one lookup an upload makes).
    /// Before the URL is reported: a run drains its uploads once every URL has
    /// been, so one queued later could be missed. The URL never waits for it.
    func share(_ phase: Phase, url: String, key: CacheKey, with remote: RemoteCache, uploadSlots: (any UploadSlots)?) {
        guard case .success(let result) = phase, result.source == .network || result.source == .revalidated,
              result.stored != nil, TierSharing.mayShare(url: url, requestHeaders: options.fetch.headers) else { return }
        remote.upload(key: key.hex, url: key.storedURL, from: cache, shareable: TierSharing.shareable, slots: uploadSlots)
    }

    /// With `--decode`, an object the tier hands over is decoded as a download
    /// is (SPEC §5: only what decodes is stored): one the decoder refuses is
    /// dropped from the local cache and the origin is asked instead.
    private func tierObjectDecodes(_ entry: CacheEntry, key: CacheKey) -> Bool {
        guard options.decode,
              ImageDecoding.decode(path: entry.bodyPath, formatName: entry.metadata.format).refusal != nil else { return true }
        bestEffort("it stays until the origin's answer, asked for next, replaces it") { try cache.remove(key.hex) }
        return false
    }
}
