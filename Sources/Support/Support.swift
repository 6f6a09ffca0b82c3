/// Support: the small layer every asyncfetch module may import.
///
/// It owns what several modules need and none of them should define: a lock
/// that owns the value it guards (`Locked`), the two clocks (`currentUnixTime`,
/// `monotonicSeconds`), ASCII helpers, the one POSIX write loop the
/// modules share (`writeAll`), and `bestEffort`, which names a write whose
/// failure a caller goes without on purpose. It imports nothing but the C library, does no
/// other I/O (it opens, reads and owns no file), and never grows policy: a
/// helper that knows about HTTP, images or the cache belongs in that module
/// instead.
public enum Support {}
