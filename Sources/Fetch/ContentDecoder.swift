import CDecode
import Support

/// Undoes a response's content codings (RFC 9110 §8.4: gzip, x-gzip,
/// deflate, br, zstd, in any stack) as the body arrives, and says at the end
/// whether every coding's stream really ended with its check value matching.
///
/// Why not libcurl's decoding: libcurl 7.88 hands over whatever it could
/// inflate from a stream cut before its end (a gzip member without its
/// trailer, a body shorter than the stream, a zstd frame or brotli stream
/// without its last block) and reports success (measured: FACTS.md), so a
/// shortened image was stored as whole. It does catch a bad CRC-32 or
/// Adler-32; this does too.
///
/// Memory: one output buffer of `bufferSize` bytes per coding; decoded bytes
/// are handed to `emit` piece by piece, so a bomb is stopped by the caller's
/// size limit after at most one buffer more.
///
/// Threading: used by one transfer on the loop thread only.
final class ContentDecoder {
    /// Why a body could not be decoded: the sentence for `FetchError.detail`.
    struct Problem: Error {
        let detail: String
        /// The body is not a valid stream of its codings (an unknown coding,
        /// garbage, a check value that does not match): the response broke
        /// HTTP ("malformed response from the server: …"), not the transfer.
        let malformed: Bool
    }

    /// Decoding stopped because `emit` refused a piece (the caller knows why).
    static let refused = Problem(detail: "", malformed: false)

    private let stages: [OpaquePointer]
    private let names: [String]
    private let outputs: [UnsafeMutablePointer<UInt8>]
    private let bufferSize: Int

    /// A decoder for a `Content-Encoding` field value, nil when it names no
    /// coding to undo (absent, or only `ContentCoding.isIdentity` items); a `Problem` for a coding
    /// this cannot decode or more than `Defaults.maxContentCodings` of them.
    static func make(contentEncoding: String?, bufferSize: Int = Defaults.receiveBufferSize) -> Result<ContentDecoder?, Problem> {
        guard let contentEncoding else { return .success(nil) }
        var codings: [(cdecode_coding, String)] = []
        for item in contentEncoding.split(separator: ",") {
            let name = trimWhitespaceLower(item)
            if ContentCoding.isIdentity(name) { continue }
            switch name {
            case "gzip", "x-gzip": codings.append((CDECODE_GZIP, "gzip"))
            case "deflate": codings.append((CDECODE_DEFLATE, "deflate"))
            case "br": codings.append((CDECODE_BR, "br"))
            case "zstd": codings.append((CDECODE_ZSTD, "zstd"))
            default:
                return .failure(Problem(detail: "unsupported content coding \"\(name)\"", malformed: true))
            }
        }
        guard !codings.isEmpty else { return .success(nil) }
        guard codings.count <= Defaults.maxContentCodings else {
            return .failure(Problem(detail: "\(codings.count) content codings stacked (at most \(Defaults.maxContentCodings) are undone)",
                                    malformed: true))
        }
        // Codings are listed in the order they were applied: undo the last first.
        var stages: [OpaquePointer] = []
        for (coding, name) in codings.reversed() {
            guard let stage = cdecode_new(coding) else {
                stages.forEach { cdecode_free($0) }
                return .failure(Problem(detail: "out of memory starting the \(name) decoder", malformed: false))
            }
            stages.append(stage)
        }
        return .success(ContentDecoder(stages: stages, names: codings.reversed().map(\.1), bufferSize: bufferSize))
    }

    private init(stages: [OpaquePointer], names: [String], bufferSize: Int) {
        self.stages = stages
        self.names = names
        self.bufferSize = bufferSize
        outputs = stages.map { _ in UnsafeMutablePointer<UInt8>.allocate(capacity: bufferSize) }
    }

    deinit {
        stages.forEach { cdecode_free($0) }
        outputs.forEach { $0.deallocate() }
    }

    /// Decodes one piece of the encoded body, handing every decoded piece to
    /// `emit` (false: stop; `refused` is returned).
    func decode(_ chunk: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) -> Bool) -> Problem? {
        feed(0, chunk, emit)
    }

    /// Whether every coding's stream ended where it says it ends, check values verified.
    var finished: Bool { stages.allSatisfy { cdecode_finished($0) != 0 } }

    /// The sentence for a body that ended before its codings did.
    static let cutShort = "compressed body cut short"

    private func feed(_ stage: Int, _ input: UnsafeRawBufferPointer, _ emit: (UnsafeRawBufferPointer) -> Bool) -> Problem? {
        guard stage < stages.count else { return emit(input) ? nil : Self.refused }
        guard let base = input.baseAddress, input.count > 0 else { return nil }
        var next: UnsafePointer<UInt8>? = base.assumingMemoryBound(to: UInt8.self)
        var remaining = input.count
        let output = outputs[stage]
        while true {
            let before = remaining
            var produced = 0
            let status = cdecode_step(stages[stage], &next, &remaining, output, bufferSize, &produced)
            if produced > 0, let problem = feed(stage + 1, UnsafeRawBufferPointer(start: output, count: produced), emit) {
                return problem
            }
            if status != CDECODE_OK { return problem(status, stage: stage) }
            if produced < bufferSize && remaining == 0 { return nil }
            if produced == 0 && remaining == before {
                return Problem(detail: "compressed body corrupt: the \(names[stage]) decoder made no progress", malformed: true)
            }
        }
    }

    private func problem(_ status: cdecode_status, stage: Int) -> Problem {
        let name = names[stage]
        let said = String(cString: cdecode_message(stages[stage]))
        switch status {
        case CDECODE_BAD_CHECK:
            let check = name == "gzip" ? "CRC mismatch" : name == "deflate" ? "Adler-32 mismatch" : "checksum mismatch"
            return Problem(detail: "compressed body corrupt: " + check, malformed: true)
        case CDECODE_BAD_LENGTH:
            return Problem(detail: "compressed body corrupt: length mismatch (gzip ISIZE)", malformed: true)
        case CDECODE_NO_MEMORY:
            return Problem(detail: "out of memory decoding \(name)", malformed: false)
        default:
            return Problem(detail: "compressed body corrupt: invalid \(name) data" + (said.isEmpty ? "" : " (\(said))"),
                           malformed: true)
        }
    }
}

@available(*, unavailable)
extension ContentDecoder: Sendable {}
