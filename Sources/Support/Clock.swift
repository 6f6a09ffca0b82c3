#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Unix seconds from the system clock, in whole microseconds: times stored in
/// cache metadata then print in at most 16 digits, which the metadata decoder
/// reads back exactly without `strtod` (every hit reads three of them).
@inlinable
public func currentUnixTime() -> Double {
    var now = timespec()
    _ = clock_gettime(CLOCK_REALTIME, &now)   // fails only for a clock the system lacks (EINVAL): this one is POSIX's
    return Double(Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec / 1000)) / 1e6
}

/// Seconds from an arbitrary start, never going backwards (for durations and deadlines).
@inlinable
public func monotonicSeconds() -> Double {
    var now = timespec()
    _ = clock_gettime(CLOCK_MONOTONIC, &now)   // fails only for a clock the system lacks (EINVAL): Linux has had this one always
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
