import Foundation
import Glibc
import Testing
import TestSupport

/// The Makefile's set-up commands as README says a user runs them (SPEC
/// §8), on a copy of the Makefile: no build is made, nothing is installed
/// on this machine.
@Suite struct MakefileE2ETests {
    /// `make demo` on a fresh machine installs what the demo needs: the
    /// libraries it builds with, python3 and curl. It installed everything the
    /// tests need too (nginx, strace, ImageMagick, Pillow and its plugins from
    /// PyPI, moto into a venv), a minute and a PyPI that must answer, or the
    /// demo failed. `make -n` shows what each target would run.
    @Test func demoInstallsOnlyWhatTheBuildAndTheDemoNeed() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-make")
        try FileManager.default.copyItem(atPath: Paths.packageRoot + "/Makefile", toPath: temp.file("Makefile"))
        let demo = try runProcess("/usr/bin/make", ["-n", "-C", temp.path, "demo"], timeout: 60)
        #expect(demo.status == 0, "\(demo.stderr)")
        for needed in ["libcurl4-openssl-dev", "libvips-dev", "python3", "curl", "demo.sh"] {
            #expect(demo.stdout.contains(needed), "make demo would not install \(needed): \(demo.stdout)")
        }
        for unneeded in ["pip install", "moto", "nginx", "strace", "imagemagick"] {
            #expect(!demo.stdout.contains(unneeded), "make demo would install \(unneeded)")
        }
        let deps = try runProcess("/usr/bin/make", ["-n", "-C", temp.path, "deps"], timeout: 60)
        for needed in ["libcurl4-openssl-dev", "pip install", "moto", "nginx", "strace", "imagemagick"] {
            #expect(deps.stdout.contains(needed), "make deps would not install \(needed)")
        }
    }

    /// `make bench` on a fresh machine installs what bench.py runs: the nginx
    /// it serves from (it starts /usr/sbin/nginx), python3-venv for the
    /// internet-like case's venv, ImageMagick for that case's JPEGs. Since
    /// `build` stopped pulling in `deps`, bench-deps named none of them.
    @Test func benchInstallsTheServerAndToolsItRuns() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-make")
        try FileManager.default.copyItem(atPath: Paths.packageRoot + "/Makefile", toPath: temp.file("Makefile"))
        let bench = try runProcess("/usr/bin/make", ["-n", "-C", temp.path, "bench"], timeout: 60)
        #expect(bench.status == 0, "\(bench.stderr)")
        for needed in ["libcurl4-openssl-dev", "nginx", "python3-venv", "imagemagick", "aria2", "iproute2", "bench.py"] {
            #expect(bench.stdout.contains(needed), "make bench would not install \(needed): \(bench.stdout)")
        }
    }

    /// `make install` after `make build`, often as root through sudo, whose
    /// PATH (`secure_path`) has no Swift toolchain (a stand-in for the built
    /// binary here). It rebuilt unconditionally (`install: build`): without
    /// `swift` on PATH it failed ("swift: command not found"), and with it,
    /// run as root, it left root-owned files in the user's .build. Now a
    /// binary newer than the sources is installed as it is, under
    /// DESTDIR/PREFIX, with the man page and the completions.
    @Test func installAfterBuildNeedsNoSwiftAndHonoursDestdirAndPrefix() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-install")
        let root = temp.file("project"), manager = FileManager.default
        for folder in ["man", "Sources", ".build/release", ".build/s3-venv/bin"] {
            try manager.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
        for file in ["Makefile", "Package.swift", "man/asyncfetch.1"] {
            try manager.copyItem(atPath: Paths.packageRoot + "/" + file, toPath: root + "/" + file)
        }
        // Sources older than the binary, as right after `make build`.
        let old = Date(timeIntervalSinceNow: -3600)
        for path in [root + "/Package.swift", root + "/Sources"] {
            try manager.setAttributes([.modificationDate: old], ofItemAtPath: path)
        }
        let binary = "#!/bin/sh\n[ \"$1\" = --generate-completion-script ] && echo \"# $2 completion\"\n"
        for stub in [".build/release/asyncfetch", ".build/s3-venv/bin/moto_server"] {
            _ = try temp.write("project/" + stub, Array(binary.utf8))
            chmod(root + "/" + stub, 0o755)
        }
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .filter { !manager.isExecutableFile(atPath: $0 + "/swift") }.joined(separator: ":")
        let destdir = temp.file("dest")
        let result = try runProcess("/usr/bin/make", ["-C", root, "install", "DESTDIR=" + destdir, "PREFIX=/usr"],
                                    environment: ["PATH": path], timeout: 120)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(manager.contentsEqual(atPath: destdir + "/usr/bin/asyncfetch", andPath: root + "/.build/release/asyncfetch"))
        #expect(manager.contentsEqual(atPath: destdir + "/usr/share/man/man1/asyncfetch.1", andPath: root + "/man/asyncfetch.1"))
        for (shell, file) in [("bash", "bash-completion/completions/asyncfetch"), ("zsh", "zsh/site-functions/_asyncfetch"),
                              ("fish", "fish/vendor_completions.d/asyncfetch.fish")] {
            let script = try? String(contentsOfFile: destdir + "/usr/share/" + file, encoding: .utf8)
            #expect(script == "# \(shell) completion\n", "\(file): \(script ?? "missing")")
        }
    }

    /// SPEC §8 / issue 2: `make demo` shows a newcomer every phase. Its
    /// server must take the demo's parallel connections at once: Python's
    /// stock server (backlog 5) made some URLs wait a second.
    @Test func theDemoShowsEveryPhaseWithoutStalls() async throws {
        let script = Paths.packageRoot + "/Tests/tools/demo.sh"
        let result = try await runProcessOffPool("/bin/bash", [script, CLI.binary], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let text = result.stdout + result.stderr
        for shown in ["\"phase\":\"loading\"", "\"phase\":\"success\"", "\"phase\":\"failure\"", "empty    http://", "(cache, "] {
            #expect(text.contains(shown), "\(shown) missing from the demo")
        }
        let durations = text.split(separator: "\n").compactMap { line -> Double? in
            guard let range = line.range(of: "\"durationMs\":") else { return nil }
            return Double(line[range.upperBound...].prefix { $0.isNumber || $0 == "." })
        }
        #expect(!durations.isEmpty)
        #expect(durations.allSatisfy { $0 < 800 }, "a URL waited: \(durations.max() ?? 0) ms")
    }
}
