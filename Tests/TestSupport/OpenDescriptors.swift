import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The process's open descriptors and what each is (the target of
/// `/proc/self/fd/N`: a path, `socket:[…]`, `anon_inode:[eventpoll]` …),
/// for tests that compare them before and after a stress.
public func openDescriptors() -> [Int32: String] {
    var found: [Int32: String] = [:]
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return found }
    for name in names {
        guard let fd = Int32(name) else { continue }
        var target = [CChar](repeating: 0, count: 512)
        let n = readlink("/proc/self/fd/" + name, &target, target.count - 1)
        // The listing's own descriptor is gone by now: no target.
        if n > 0 { found[fd] = String(decoding: target[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    }
    return found
}
