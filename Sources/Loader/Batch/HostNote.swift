/// What a scheduler tells its owner to report (`-v`): not part of its state.
public enum HostNote: Sendable, Equatable {
    case paused(HostKey, seconds: Double, status: Int)
    case limitChanged(HostKey, from: Int, to: Int)
    case gaveUp(HostKey, HostFailure)
}
