/// A continuation held while its task waits (a pushed-back fetch for its
/// host, the batch's main loop for loads, the reader for queue room), as a
/// reference: a state that holds a `CheckedContinuation?` inline (a
/// resilient type, its layout known only at run time) copies, destroys and
/// compares it with nil through value witnesses, in every step and every
/// gate's life, although it is set only while someone waits. One object per
/// wait instead.
final class ParkedContinuation<Value: Sendable>: Sendable {
    private let continuation: CheckedContinuation<Value, Never>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = continuation
    }

    func resume(returning value: Value) { continuation.resume(returning: value) }
}

extension ParkedContinuation where Value == Void {
    func resume() { continuation.resume() }
}
