import Foundation
import ImageDecoding
import ImageFormats
import Testing
import TestSupport

/// asyncfetch's verdict on ~2,100 generated bodies against real decoders.
///
/// `Tests/tools/image_corpus.py` (run here, seeded) encodes every format
/// with Pillow and its plugins, and writes each image whole, with trailing
/// data (1 B to 1 MiB of random bytes, zeros or HTML), cut at a dozen
/// offsets, and with a flipped bit; Pillow and ImageMagick's
/// `identify -regard-warnings` (both installed by `make deps`) judge each
/// body. The structure check then reads every body, fed in random-sized
/// chunks as a transfer would feed it.
///
/// It fails on any false rejection (a whole image, with or without trailing
/// data, or a damaged one every decoder reads, that asyncfetch refuses), on
/// any accepted cut that every decoder refuses, and on a wrong format or
/// size (the corpus holds none of the cases docs/images.md says pass undecided). Where the
/// decoders disagree, either verdict is fine. The per-format confusion
/// matrix is printed.
///
/// The `--decode` column: every body the structure check accepts is also
/// decoded with libvips (`ImageDecoding`), as `--decode` would. With it, the
/// verdict must match the decoders on every body where they agree with each
/// other, flipped bytes included, for every format libvips reads (BMP and
/// ICO keep the structure verdict); its matrix is printed beside the first.
@Suite(.serialized) struct ImageDifferentialTests {
    struct Body {
        let file: String, format: String, kind: String
        let imageLength: Int, pillow: String, magick: String, width: Int, height: Int
        /// Every decoder that ran says the same; nil when they disagree (or none ran).
        var decoders: Bool? {
            let verdicts = [pillow, magick].filter { $0 != "-" }
            guard let first = verdicts.first, verdicts.allSatisfy({ $0 == first }) else { return nil }
            return first == "ok"
        }
    }

    struct Tally { var bodies = 0, falseRejections = 0, falseAcceptances = 0, stricter = 0, lenient = 0, wrongSize = 0 }

    /// The `--decode` column for one format: bodies where the decoders agree, and how `--decode` judged them.
    struct DecodeTally { var agreed = 0, bothAccept = 0, bothRefuse = 0, refusedGood = 0, acceptedBad = 0, decoded = 0 }

    /// What asyncfetch decides for one body, fed in chunks of random sizes.
    static func judge(_ bytes: [UInt8], rng: inout SplitMix) -> (accepted: Bool, info: ImageInfo?, problem: String?) {
        var structure = ImageStructure()
        bytes.withUnsafeBytes { raw in
            var at = 0
            while at < raw.count {
                let size = min(raw.count - at, 1 + Int(rng.next() % UInt64([7, 300, 5000, 70_000][Int(rng.next() % 4)])))
                structure.feed(UnsafeRawBufferPointer(rebasing: raw[at..<at + size]))
                at += size
            }
        }
        guard let info = ImageInfo.sniff(Array(bytes.prefix(64 * 1024))) else { return (false, nil, "not an image") }
        let problem = structure.problem
        return (problem == nil, info.completed(by: structure), problem)
    }

    @Test func verdictsAgreeWithRealDecoders() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-corpus")
        let script = Paths.packageRoot + "/Tests/tools/image_corpus.py"
        let run = try runProcess("/usr/bin/env", ["python3", script, temp.path, "--seed", "13", "--magick"], timeout: 300)
        try #require(run.status == 0, "the corpus generator failed (make deps installs Pillow): \(run.stderr)")
        let manifest = try String(contentsOfFile: temp.file("manifest.tsv"), encoding: .utf8)
        let bodies = manifest.split(separator: "\n").map { line -> Body in
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return Body(file: f[0], format: f[1], kind: f[2], imageLength: Int(f[3]) ?? 0, pillow: f[4], magick: f[5],
                        width: Int(f[6]) ?? 0, height: Int(f[7]) ?? 0)
        }
        #expect(bodies.count >= 1500)
        #expect(bodies.contains { $0.magick != "-" }, "ImageMagick's identify ran (make deps installs it)")
        var tallies: [String: Tally] = [:]
        var decodeTallies: [String: DecodeTally] = [:]
        var failures: [String] = []
        var decodeFailures: [String] = []
        var rng = SplitMix(seed: 13)
        for body in bodies {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: temp.file(body.file))))
            let (accepted, info, problem) = Self.judge(bytes, rng: &rng)
            var tally = tallies[body.format] ?? Tally()
            tally.bodies += 1
            let why = problem ?? "accepted"
            switch body.kind {
            case "whole", "trailing":
                if !accepted {
                    tally.falseRejections += 1
                    failures.append("\(body.file): rejected (\(why)), but the image is all there")
                } else if info?.format.name != body.format {
                    failures.append("\(body.file): format \(info?.format.name ?? "none"), expected \(body.format)")
                } else if body.width > 0, info?.width != body.width || info?.height != body.height {
                    tally.wrongSize += 1
                    failures.append("\(body.file): size \(info?.width ?? 0)×\(info?.height ?? 0), decoders say \(body.width)×\(body.height)")
                }
            case "cut":
                if accepted && body.decoders == false {
                    tally.falseAcceptances += 1
                    failures.append("\(body.file): a cut at \(bytes.count) of \(body.imageLength) bytes was accepted; every decoder refuses it")
                } else if !accepted && body.decoders == true {
                    tally.stricter += 1   // a real cut that decoders tolerate: rejecting it is right
                }
            default:   // flip
                if !accepted && body.decoders == true {
                    tally.falseRejections += 1
                    failures.append("\(body.file): a flipped bit every decoder reads past was rejected (\(why))")
                } else if accepted && body.decoders == false {
                    tally.lenient += 1   // damage inside coded data: no cheap structure shows it
                }
            }
            tallies[body.format] = tally
            // The --decode column: what a run with --decode stores.
            var column = decodeTallies[body.format] ?? DecodeTally()
            var stored = accepted
            if accepted, let format = info?.format {
                let verdict = ImageDecoding.decode(path: temp.file(body.file), format: format)
                if verdict == .decoded { column.decoded += 1 }
                stored = verdict.refusal == nil
            }
            // Cuts the structure check refuses although the decoders show them (GIF trailers, above) stay refused.
            // BMP and ICO, which libvips does not read, keep the structure verdict (the column above).
            if let agreed = body.decoders, body.kind != "cut" || !agreed || accepted,
               info.map({ ImageDecoding.decodes($0.format) }) ?? true {
                column.agreed += 1
                if agreed { column.bothAccept += 1 } else { column.bothRefuse += 1 }
                if agreed && !stored {
                    column.refusedGood += 1
                    decodeFailures.append("\(body.file) (\(body.kind)): every decoder reads it; --decode refuses it")
                } else if !agreed && stored {
                    column.acceptedBad += 1
                    decodeFailures.append("\(body.file) (\(body.kind)): every decoder refuses it; --decode stores it")
                }
            }
            decodeTallies[body.format] = column
        }
        print("format  bodies  false-rejections  false-acceptances(cut)  stricter-than-decoders(cut)  damage-passed(flip)  wrong-size")
        for (format, t) in tallies.sorted(by: { $0.key < $1.key }) {
            print("\(format.padding(toLength: 6, withPad: " ", startingAt: 0))  \(t.bodies)  \(t.falseRejections)  \(t.falseAcceptances)  \(t.stricter)  \(t.lenient)  \(t.wrongSize)")
        }
        print("--decode: format  decoders-agree (accept/refuse)  decoded-by-libvips  refused-but-decoders-read  stored-but-decoders-refuse")
        for (format, t) in decodeTallies.sorted(by: { $0.key < $1.key }) {
            print("--decode: \(format.padding(toLength: 6, withPad: " ", startingAt: 0))  \(t.agreed) (\(t.bothAccept)/\(t.bothRefuse))  \(t.decoded)  \(t.refusedGood)  \(t.acceptedBad)")
        }
        if !decodeFailures.isEmpty {
            Issue.record("--decode: \(decodeFailures.count) verdicts against the decoders:\n\(decodeFailures.prefix(40).joined(separator: "\n"))")
        }
        if !failures.isEmpty {
            Issue.record("\(failures.count) wrong verdicts:\n\(failures.prefix(40).joined(separator: "\n"))")
        }
    }
}

/// A seeded generator (SplitMix64), so a failing chunking can be replayed.
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
