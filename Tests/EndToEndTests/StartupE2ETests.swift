import Foundation
import Testing
import TestSupport

/// A run answered from the cache loads no OpenSSL library: the key's MD5 is
/// OpenSSL's own code, linked from its `libcrypto.a` and not exported, so a
/// start needs no `libcrypto.so.3` (its relocations were most of a one-URL
/// run's start-up). TLS loads `libcrypto.so.3` with libcurl, and the
/// executable's copy must not stand in for any of its symbols.
@Suite struct StartupE2ETests {
    /// The shared libraries a traced run opened.
    static func librariesOpened(_ arguments: [String], cli: CLI) throws -> (result: ProcessResult, libraries: [String]) {
        let trace = cli.cache.path + "/strace.txt"
        let result = try runProcess("/usr/bin/strace", ["-f", "-qq", "-e", "trace=openat", "-o", trace, CLI.binary] + arguments,
                                    environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir])
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        let libraries = lines.filter { $0.contains(".so") && !$0.contains("ENOENT") }.compactMap { line in
            line.split(separator: "\"").dropFirst().first.map { String($0.split(separator: "/").last ?? $0) }
        }
        return (result, libraries)
    }

    @Test func cacheOnlyRunLoadsNoOpenSSLAndTLSStillWorks() throws {
        let nginx = try NginxServer(root: Paths.fixtures, tls: true)
        let cacert = try #require(nginx.certificatePath)
        let url = nginx.url("/images/red-64x48.png")
        let cli = try CLI()

        // Over https: libcurl brings libcrypto.so.3, the handshake verifies, the body is stored.
        let fetched = try Self.librariesOpened(["--json", "--cacert", cacert, url], cli: cli)
        #expect(fetched.result.status == 0, "\(fetched.result.stdout)\(fetched.result.stderr)")
        #expect(fetched.libraries.contains { $0.hasPrefix("libcrypto.so") }, "\(fetched.libraries)")
        let line = try #require(CLI.jsonLines(fetched.result.stdout)?.first { $0["phase"] as? String == "success" },
                                "\(fetched.result.stdout)")

        // The entry's name is the URL's MD5 as OpenSSL's own command computes it.
        let digest = try runProcess("/usr/bin/openssl", ["dgst", "-md5", "-r"], stdin: Array(url.utf8))
        let expected = try #require(digest.stdout.split(separator: " ").first.map(String.init))
        #expect((line["path"] as? String)?.hasSuffix("/" + expected) == true, "\(line) against \(expected)")

        // From the cache: no OpenSSL (and no libcurl) at all.
        let offline = try Self.librariesOpened(["--json", "--offline", url], cli: cli)
        #expect(offline.result.status == 0, "\(offline.result.stdout)\(offline.result.stderr)")
        #expect(!offline.libraries.contains { $0.hasPrefix("libcrypto") || $0.hasPrefix("libcurl") }, "\(offline.libraries)")
    }

    /// None of OpenSSL's symbols is in the executable's dynamic symbol table:
    /// exported, they would interpose on the libcrypto.so.3 that TLS loads.
    @Test func executableExportsNoOpenSSLSymbol() throws {
        let symbols = try runProcess("/usr/bin/readelf", ["--dyn-syms", "-W", CLI.binary])
        #expect(symbols.status == 0, "\(symbols.stderr)")
        let defined = symbols.stdout.split(separator: "\n").filter { !$0.contains(" UND ") }.compactMap { $0.split(separator: " ").last }
        let openssl = defined.filter { $0.hasPrefix("MD5") || $0.hasPrefix("OPENSSL_") || $0.hasPrefix("CRYPTO_") }
        #expect(openssl.isEmpty, "exported: \(openssl)")
        let needed = try runProcess("/usr/bin/readelf", ["-d", CLI.binary])
        #expect(!needed.stdout.contains("libcrypto"), "\(needed.stdout)")
    }
}
