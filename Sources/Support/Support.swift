/// Support: the small layer every asyncfetch module may import.
///
/// It owns what several modules need and none of them should define: a lock
/// that owns the value it guards (`Locked`), the two clocks (`currentUnixTime`,
/// `monotonicSeconds`) and ASCII helpers. It imports nothing but the C library,
/// never does I/O, and never grows policy: a helper that knows about HTTP,
/// images or the cache belongs in that module instead.
public enum Support {}
