#if canImport(Glibc)
import Glibc
#endif

/// The body of a `no-store` response, kept in the cache's temporary
/// directory only until every caller that shares the load has delivered it
/// (see `Delivery`): the file is removed when the last reference goes.
final class TransientBody: Sendable {
    let path: String

    init(path: String) { self.path = path }

    deinit { unlink(path) }
}
