import Synchronization

/// Bytes as they arrive, across every transfer of a client: what a progress
/// bar samples (`FetchConfiguration.progress`).
///
/// The loop thread adds to it on every body chunk, so it is a few relaxed
/// atomic adds and nothing else; a reader samples it whenever it redraws.
/// Counts cover 2xx bodies. A transfer that declares its length adds it to
/// `expectedBytes` when its body starts; when it ends (done, failed or
/// cancelled) the declared length is replaced by what actually arrived, so
/// `expectedBytes - receivedBytes` is what the transfers in flight still
/// have to bring.
public final class TransferProgress: Sendable {
    private let received = Atomic<Int64>(0)
    private let expected = Atomic<Int64>(0)
    private let unknown = Atomic<Int>(0)
    private let inFlight = Atomic<Int>(0)

    public init() {}

    /// Body bytes received so far.
    public var receivedBytes: Int64 { received.load(ordering: .relaxed) }
    /// Declared lengths of the bodies started so far (with the ones that ended counted as received).
    public var expectedBytes: Int64 { expected.load(ordering: .relaxed) }
    /// Bodies in flight whose length was not declared: no ETA while there are any.
    public var unknownLengths: Int { unknown.load(ordering: .relaxed) }
    /// Bodies being received now.
    public var bodiesInFlight: Int { inFlight.load(ordering: .relaxed) }

    func bodyStarted(length: Int64?) {
        inFlight.add(1, ordering: .relaxed)
        if let length, length >= 0 {
            expected.add(length, ordering: .relaxed)
        } else {
            unknown.add(1, ordering: .relaxed)
        }
    }

    func received(_ count: Int) {
        received.add(Int64(count), ordering: .relaxed)
    }

    func bodyEnded(length: Int64?, received count: Int64) {
        inFlight.subtract(1, ordering: .relaxed)
        if let length, length >= 0 {
            expected.add(count - length, ordering: .relaxed)
        } else {
            unknown.subtract(1, ordering: .relaxed)
            expected.add(count, ordering: .relaxed)
        }
    }
}
