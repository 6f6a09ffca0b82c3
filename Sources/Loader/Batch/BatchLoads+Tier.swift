import Fetch
import Support

/// The remote tier's lane (`ImageLoader.tierLane`) without a Swift task per
/// URL: a read starts with `RemoteCache.startRead`, and for an object
/// answered at once (a hit) its end runs on the tier client's completion
/// worker, which has streamed the object into the local cache's writer:
/// there the object is checked and committed (`RemoteObjectSink.finish`),
/// judged fresh or not (`ImageLoader.tierAnswer`), the URL reported, the
/// lane's slot given back, and the loads that lets start are started, as
/// an origin's load ends (`BatchLoads`). A miss (404), an error, or a stale
/// object goes on to its origin: queued there before the lane's slot is
/// given back (the batch is never seen idle in between), without a report.
///
/// Cancellation: the read's handle is in `running` like an origin load's;
/// a read cancelled is `.unavailable`, and its URL, queued for its origin
/// after `cancel()`, is reported `failure`/`cancelled` there (`onCancelled`).
extension BatchLoads {
    func startTierRead(_ load: HostLoad, now: Double) {
        guard let remote = loader.options.remote else { return }
        let handle = FetchHandle()
        let gate = register(load, now: now, handle: handle)
        remote.startRead(load.key, into: loader.cache, handle: handle) { [self, gate] read in
            switch loader.tierAnswer(read, key: load.key) {
            case .answered(let phase):
                BatchLoads.ended(gate, phase, slotGivenBack: false)
            case .origin(let stale):
                var last: HostKey?
                let origin = ImageLoader.hostKey(load.key, url: load.url, reusing: &last)
                let since = gate.batchEnd?.since ?? now
                dispatch.enqueue([load.afterTier(host: origin, entry: stale, elapsed: monotonicSeconds() - since)])
                BatchLoads.handedOver(gate)
            }
        }
    }
}
