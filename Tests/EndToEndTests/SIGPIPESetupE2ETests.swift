import Foundation
import Testing
import TestSupport

/// A run ignores SIGPIPE before it opens anything (a closed stdout is then
/// EPIPE, not a kill with temporary files left behind). Should that fail, the
/// run does not go ahead without it: it says so and exits 1, before any URL.
@Suite struct SIGPIPESetupE2ETests {
    /// A library whose `sigaction` refuses SIGPIPE (EINVAL) and passes every other signal on.
    static let refusing = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <errno.h>
        #include <signal.h>
        typedef int (*sigaction_function)(int, const struct sigaction *, struct sigaction *);
        int sigaction(int signo, const struct sigaction *action, struct sigaction *old) {
            if (signo == SIGPIPE && action != NULL) {
                errno = EINVAL;
                return -1;
            }
            sigaction_function real = (sigaction_function)dlsym(RTLD_NEXT, "sigaction");
            return real(signo, action, old);
        }
        """

    @Test func aRunThatCannotIgnoreSIGPIPESaysSoAndFetchesNothing() async throws {
        let folder = try TempDirectory(prefix: "asyncfetch-sigpipe")
        let (library, compiled) = try await offPool {
            try compileC(Self.refusing, named: "refusing.so", in: folder, flags: ["-shared", "-fPIC"], libraries: ["-ldl"])
        }
        try #require(compiled.status == 0, "\(compiled.stderr)")
        let cli = try CLI()
        let result = try await cli.run(["--offline", "http://127.0.0.1:9/a.png"], environment: ["LD_PRELOAD": library])
        #expect(result.status == 1 && result.signal == nil, "\(result.stderr)")
        #expect(result.stderr.contains("asyncfetch: cannot ignore SIGPIPE: sigaction: Invalid argument"), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "no URL is reported: \(result.stdout)")
    }
}
