#if canImport(Glibc)
import Glibc
#endif
import DiskCache
import enum Fetch.Defaults

extension ImageLoader {
    /// Copies a successful body to `delivery` (if any) and returns the phase
    /// to report: unchanged, or `failure`/`io` when the copy failed. Always
    /// lets go of a `no-store` body's temporary file.
    func deliver(_ phase: Phase, url: String, to delivery: Delivery?) -> Phase {
        guard case .success(var result) = phase else { return phase }
        let transient = result.transientBody
        result.transientBody = nil
        defer { transient?.release() }
        guard let delivery, let source = result.path ?? transient?.path else {
            // A body the cache could not store, and nobody to hand it to: lost.
            if let problem = result.storeFailure, result.stored == nil {
                return .failure(LoadError(kind: .io, message: problem, attempts: result.attempts))
            }
            return .success(result)
        }
        do {
            if case .receiver(let receiver) = delivery {
                result.receipt = try receiver.receive(url: url, body: source, result: result)
            } else {
                try Self.copy(from: source, to: delivery, cancelled: { Task.isCancelled })
                // `-o FILE` is named in the result as `-P`'s files are (`-> FILE`, JSON `output`).
                if case .file(let path) = delivery { result.receipt = DeliveryReceipt(path: path, method: "copy") }
            }
        } catch let error as DeliveryError {
            // Cancelled with the body part way out: the URL is `cancelled`, never claimed delivered.
            return .failure(LoadError(kind: error.cancelled ? .cancelled : .io, message: error.message, attempts: result.attempts))
        } catch {
            return .failure(LoadError(kind: .io, message: "\(error)", attempts: result.attempts))
        }
        return .success(result)
    }

    struct DeliveryError: Error {
        let message: String
        /// The load was cancelled while the destination took no more (`CancellableWrite`).
        var cancelled = false
    }

    /// Streams `source` to the destination in blocks of
    /// `Defaults.deliveryCopyBytes` (memory stays flat). Copying a file onto itself (`-o` naming the cache path) is a no-op.
    /// A regular file that could not be written whole is removed.
    /// A destination nobody reads (a full pipe, a FIFO no reader opens) holds
    /// the copy only until `cancelled` (for a load, its task's cancellation) says so:
    /// it then throws a `cancelled` error (`CancellableWrite`).
    static func copy(from source: String, to delivery: Delivery, cancelled: () -> Bool) throws(DeliveryError) {
        func failure(_ what: String, _ path: String) -> DeliveryError {
            DeliveryError(message: "cannot \(what) \(path): \(String(cString: strerror(errno)))")
        }
        let input = DiskCacheStore.openForReading(source)   // handing an entry on is not a use of it
        guard input >= 0 else { throw failure("read", source) }
        defer { close(input) }
        let output: Int32
        switch delivery {
        case .standardOutput:
            output = 1
        case .receiver:
            return
        case .file(let path):
            var from = stat(), to = stat()
            if fstat(input, &from) == 0, stat(path, &to) == 0, from.st_dev == to.st_dev, from.st_ino == to.st_ino { return }
            output = try openForDelivery(path, cancelled: cancelled)
        }
        var buffer = [UInt8](repeating: 0, count: Defaults.deliveryCopyBytes)
        var writer = CancellableWrite(fd: output)
        var failed: DeliveryError?
        while true {
            let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { failed = failure("read", source); break }
            if n == 0 { break }
            let sent = buffer.withUnsafeBytes { writer.send(UnsafeRawBufferPointer(rebasing: $0[0..<n]), cancelled: cancelled) }
            if sent == .cancelled {
                failed = DeliveryError(message: "cancelled while writing the body to \(delivery.name), which took no more of it",
                                       cancelled: true)
                break
            }
            if case .failed(let code) = sent {
                errno = code
                failed = failure("write", delivery.name)
                break
            }
        }
        if let code = writer.end(), failed == nil {
            errno = code
            failed = failure("write", delivery.name)
        }
        if output != 1 {
            var info = stat()
            let regular = fstat(output, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
            if close(output) != 0 && failed == nil { failed = failure("write", delivery.name) }
            // A file cut short is worse than none: a script that finds it takes it for the image
            // (what it held before went with O_TRUNC). Only a regular file: never `-o /dev/full`.
            // Where even that fails, the message says the file is there, cut short.
            if let reason = failed, regular, case .file(let path) = delivery, unlink(path) != 0 {
                failed = DeliveryError(message: "\(reason.message); the cut-short \(path) could not be removed: \(String(cString: strerror(errno)))",
                                       cancelled: reason.cancelled)
            }
        }
        if let failed { throw failed }
    }

    /// Opens `-o FILE` for writing, created or truncated. Never waits in the
    /// kernel (`O_NONBLOCK`, which only this descriptor has): a FIFO no reader
    /// has opened refuses with `ENXIO`, and is tried again every
    /// `Defaults.deliveryCancelCheckMilliseconds` until a reader comes (as a
    /// blocking open would wait) or `cancelled` says so. A file another
    /// program holds a lease on (a Samba oplock, an NFS delegation) refuses
    /// with `EWOULDBLOCK` while the lease is being given back, and is tried
    /// again the same way. The copy's writes then wait for room as
    /// `CancellableWrite` does.
    private static func openForDelivery(_ path: String, cancelled: () -> Bool) throws(DeliveryError) -> Int32 {
        while true {
            let output = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0o644)
            if output >= 0 { return output }
            let code = errno
            if code == EINTR { continue }
            var info = stat()
            let leased = code == EWOULDBLOCK
            guard leased || (code == ENXIO && stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO) else {
                throw DeliveryError(message: "cannot write \(path): \(OutputFileProblem.reason(path, errno: code))")
            }
            if cancelled() {
                throw DeliveryError(message: leased ? "cancelled while waiting for another program to let go of \(path)"
                                                    : "cancelled while waiting for a reader of the FIFO \(path)", cancelled: true)
            }
            // A pause (no descriptors): interrupted by a signal is as good; anything else is a failure.
            if poll(nil, 0, Defaults.deliveryCancelCheckMilliseconds) < 0 && errno != EINTR {
                throw DeliveryError(message: "cannot wait for a reader of the FIFO \(path): poll: \(String(cString: strerror(errno)))")
            }
        }
    }
}
