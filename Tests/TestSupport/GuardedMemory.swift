import Glibc

/// Puts bytes flush against an inaccessible page (and behind another), so
/// that a parser reading even one byte past the end — or before the start —
/// of its buffer dies with SIGSEGV instead of silently reading a neighbour.
/// The property tests run every parser over such buffers.
public enum GuardedMemory {
    public static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    public enum Placement { case flushWithEnd, flushWithStart }

    public static func with<R>(_ bytes: [UInt8], _ placement: Placement = .flushWithEnd,
                        _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let dataPages = max(1, (bytes.count + pageSize - 1) / pageSize)
        let total = (dataPages + 2) * pageSize
        guard let base = mmap(nil, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              base != UnsafeMutableRawPointer(bitPattern: -1) else {
            // No guard pages available: still run the body over an exact-size copy.
            return try bytes.withUnsafeBufferPointer(body)
        }
        defer { munmap(base, total) }
        let data = base + pageSize
        let start = placement == .flushWithEnd ? dataPages * pageSize - bytes.count : 0
        bytes.withUnsafeBytes { source in
            if let from = source.baseAddress { (data + start).copyMemory(from: from, byteCount: source.count) }
        }
        let locked = mprotect(base, pageSize, PROT_NONE) == 0
            && mprotect(data + dataPages * pageSize, pageSize, PROT_NONE) == 0
            && mprotect(data, dataPages * pageSize, PROT_READ) == 0
        precondition(locked, "mprotect failed: \(String(cString: strerror(errno)))")
        let typed = (data + start).bindMemory(to: UInt8.self, capacity: max(1, bytes.count))
        return try body(UnsafeBufferPointer(start: typed, count: bytes.count))
    }
}
