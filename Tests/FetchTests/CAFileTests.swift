import Fetch
import Testing
import TestSupport

/// `--cacert`'s check before any transfer: a file libcurl could load passes;
/// a typo, a directory or a non-PEM file is named at once.
@Suite struct CAFileTests {
    static let pem = Array("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".utf8)

    @Test func aPEMFilePassesAndOtherFilesSayWhy() throws {
        let temp = try TempDirectory()
        #expect(CAFile.problem(at: try temp.write("ca.pem", Self.pem)) == nil)
        let trusted = Array("-----BEGIN TRUSTED CERTIFICATE-----\nMIIB\n".utf8)
        #expect(CAFile.problem(at: try temp.write("trusted.pem", trusted)) == nil)
        #expect(CAFile.problem(at: try temp.write("ca.der", [0x30, 0x82, 0x01, 0x0A])) == "no PEM certificate in it (a line '-----BEGIN CERTIFICATE-----')")
        #expect(CAFile.problem(at: try temp.write("empty.pem", [])) == "no PEM certificate in it (a line '-----BEGIN CERTIFICATE-----')")
        #expect(CAFile.problem(at: temp.path) == "is a directory")
        #expect(CAFile.problem(at: temp.file("missing.pem")) == "No such file or directory")
    }

    @Test func aMarkerSplitBetweenTwoReadsIsFound() throws {
        // The scan reads 64 KiB at a time: "CERTIFICATE-----" straddles the first boundary.
        let temp = try TempDirectory()
        let head = Array("-----BEGIN ".utf8)
        let marker = Array("CERTIFICATE-----\n".utf8)
        let padding = [UInt8](repeating: 0x23, count: 64 * 1024 - head.count - 7)
        #expect(CAFile.problem(at: try temp.write("split.pem", padding + head + marker)) == nil)
        let noMarker = [UInt8](repeating: 0x23, count: 200 * 1024)
        #expect(CAFile.problem(at: try temp.write("long.txt", noMarker)) != nil)
    }
}
