/// A value that can only be reached with its lock held (a pthread mutex: TSan understands
/// it, unlike Synchronization.Mutex), so forgetting the lock does not compile.
final class TSLocked<Value>: @unchecked Sendable {
    private let mutex = TSMutex()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try mutex.withLock { try body(&value) }
    }
}
