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

    /// `make test`'s time limit (Tests/tools/time-limit.sh) ends every
    /// process the run started, one in a process group of its own too, as
    /// `swift test` starts the `.xctest` one: `timeout` signals its own group
    /// only, and left that process running. Ended by the limit (124) or by a
    /// signal to the script (Ctrl-C on `make test`: 130, SIGTERM: 143); a
    /// command that ends in time keeps its status.
    @Test func theTestTimeLimitEndsEveryProcessTheRunStarted() async throws {
        let temp = try TempDirectory(prefix: "asyncfetch-limit")
        let script = Paths.packageRoot + "/Tests/tools/time-limit.sh"
        let pidFile = temp.file("child.pid")
        // With job control (`set -m`) a background job gets a process group of its own.
        let command = "set -m; sleep 600 & echo $! > \"$0\"; wait"
        let run = try startProcess("/bin/bash", [script, "600", "/bin/bash", "-c", command, pidFile], timeout: 60)
        var child: pid_t?
        for _ in 0..<3_000 where child == nil {
            child = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .newlines)) }
            if child == nil { try await Task.sleep(nanoseconds: 10_000_000) }
        }
        let pid = try #require(child, "the command never started its child")
        #expect(getpgid(pid) == pid, "the child leads a process group of its own")
        run.sendSignal(SIGTERM)
        let result = try await run.finish()
        #expect(result.status == 143, "\(result.stderr)")
        #expect(!Self.isRunning(pid), "the child \(pid) outlived the run it belonged to")
        if Self.isRunning(pid) { kill(pid, SIGKILL) }

        let limited = try await runProcessOffPool("/bin/bash", [script, "1", "/bin/bash", "-c", "sleep 600"], timeout: 60)
        #expect(limited.status == 124 && limited.stderr.contains("still running after 1 s"), "\(limited.status) \(limited.stderr)")
        let ended = try await runProcessOffPool("/bin/bash", [script, "60", "/bin/bash", "-c", "exit 3"], timeout: 60)
        #expect(ended.status == 3, "\(ended.stderr)")
    }

    /// Whether `pid` is a process that has not ended (a zombie has).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].hasPrefix(" Z")
    }

    /// SPEC §8 / issue 2: `make demo` shows a newcomer every phase. Its
    /// server must take the demo's parallel connections at once: Python's
    /// stock server (backlog 5) made some URLs wait a second, a connection
    /// the listen queue had no room for. The demo runs in a network
    /// namespace of its own (`unshare -n`, root, as the `chattr` tests), whose
    /// kernel counters then count only its connections: none was dropped
    /// (`ListenOverflows`, `ListenDrops` in /proc/net/netstat). A time per URL
    /// told the same only on an idle machine. Shown failing with the demo's
    /// `request_queue_size` at 1: 2 to 7 drops (and URLs of 1.2 to 2.2 s).
    @Test func theDemoShowsEveryPhaseWithoutStalls() async throws {
        let script = Paths.packageRoot + "/Tests/tools/demo.sh"
        let inNamespace = """
            command -v ip >/dev/null || exit 91
            ip link set lo up || exit 90
            bash "$1" "$2"; status=$?
            awk '/^TcpExt:/ { if (!names) { split($0, name); names = 1 } else for (i = 2; i <= NF; i++) print "netstat:", name[i], $i }' \
              /proc/net/netstat >&2
            exit $status
            """
        let result = try await runProcessOffPool("/usr/bin/unshare", ["-n", "/bin/bash", "-c", inNamespace, "demo", script, CLI.binary],
                                                 timeout: 120)
        try #require(result.status != 91, "no `ip` (iproute2; `make deps` installs it): \(result.stderr)")
        try #require(result.status != 90 && !result.stderr.hasPrefix("unshare:"), "a network namespace needs root: \(result.stderr)")
        #expect(result.status == 0, "\(result.stderr)")
        let text = result.stdout + result.stderr
        for shown in ["\"phase\":\"loading\"", "\"phase\":\"success\"", "\"phase\":\"failure\"", "empty    http://", "(cache, "] {
            #expect(text.contains(shown), "\(shown) missing from the demo")
        }
        let counters = Dictionary(result.stderr.split(separator: "\n").compactMap { line -> (String, Int)? in
            let words = line.split(separator: " ")
            guard words.count == 3, words[0] == "netstat:", let value = Int(words[2]) else { return nil }
            return (String(words[1]), value)
        }, uniquingKeysWith: { first, _ in first })
        #expect(counters["ListenOverflows"] == 0 && counters["ListenDrops"] == 0,
                "connections the demo's server had no room for: \(counters.filter { $0.key.hasPrefix("Listen") })")
    }
}
