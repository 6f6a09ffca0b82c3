import Foundation
import Glibc

/// A fresh directory under /tmp (mkdtemp), removed recursively by `remove()` or on deinit.
public final class TempDirectory: @unchecked Sendable {
    public let path: String
    private let lock = TSMutex()
    private var removed = false

    public init(prefix: String = "asyncfetch-test") throws {
        let safePrefix = prefix.replacingOccurrences(of: "/", with: "_")
        var template = Array("/tmp/\(safePrefix).XXXXXX".utf8CString)
        let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard let result else { throw TestSupportError.posix("mkdtemp", errno) }
        path = String(cString: result)
    }

    deinit {
        remove()
    }

    /// `path + "/" + name`
    public func file(_ name: String) -> String {
        path + "/" + name
    }

    /// Writes `bytes` to `path/name` (creating intermediate directories) and returns the full path.
    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let full = file(name)
        let parent = (full as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: full))
        return full
    }

    /// Removes the directory and everything below it. Idempotent.
    public func remove() {
        let shouldRemove: Bool = lock.withLock {
            if removed { return false }
            removed = true
            return true
        }
        guard shouldRemove else { return }
        // Make everything writable first so read-only fixtures do not block removal.
        if let enumerator = FileManager.default.enumerator(atPath: path) {
            while let item = enumerator.nextObject() as? String {
                _ = chmod(path + "/" + item, 0o700)
            }
        }
        _ = chmod(path, 0o700)
        try? FileManager.default.removeItem(atPath: path)
    }
}
