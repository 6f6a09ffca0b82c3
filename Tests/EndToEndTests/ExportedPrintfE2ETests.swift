import Foundation
import Testing
import TestSupport

/// The executable's `curl_msnprintf` and `curl_maprintf` (CCurl.c) take the
/// place of libcurl's for every libcurl in the process: libvips, which
/// `--decode` loads, brings libcurl-gnutls, and the dynamic linker binds its
/// calls to them too (`DecodeE2ETests.theLibrariesDecodeLoadsKeepTheirOwnLibcurl`).
/// A format they do not write themselves goes to libcurl's own engine, which
/// is not loaded before the first transfer: such a call from another library
/// before that loads libcurl.so.4 first, and gets libcurl's own output.
@Suite struct ExportedPrintfE2ETests {
    /// A library whose constructor (before the executable's `main`, libcurl not loaded)
    /// calls the two through the global scope, as another library's PLT would, with
    /// formats that go to libcurl's engine (a width, a flag, `%%`, `%zu`), and prints
    /// what it got and whether libcurl.so.4 was loaded before and after.
    static let early = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <stddef.h>
        #include <stdio.h>
        #include <stdlib.h>
        typedef int (*snprintf_function)(char *, size_t, const char *, ...);
        typedef char *(*aprintf_function)(const char *, ...);
        __attribute__((constructor)) static void early(void) {
            snprintf_function msnprintf = (snprintf_function)dlsym(RTLD_DEFAULT, "curl_msnprintf");
            aprintf_function maprintf = (aprintf_function)dlsym(RTLD_DEFAULT, "curl_maprintf");
            Dl_info where;
            const char *owner = msnprintf != NULL && dladdr((void *)msnprintf, &where) ? where.dli_fname : "none";
            int before = dlopen("libcurl.so.4", RTLD_NOW | RTLD_NOLOAD) != NULL;
            char buffer[64] = "untouched";
            int length = msnprintf != NULL ? msnprintf(buffer, sizeof buffer, "[%5d|%-3s|%%|%zu]", 42, "x", (size_t)7) : -1;
            char *made = maprintf != NULL ? maprintf("%03ld-%s", 5L, "y") : NULL;
            int after = dlopen("libcurl.so.4", RTLD_NOW | RTLD_NOLOAD) != NULL;
            fprintf(stderr, "early: %s; loaded before %d, after %d; %d %s %s\\n", owner, before, after, length, buffer,
                    made != NULL ? made : "(null)");
            free(made);
        }
        """

    @Test func aFormatForLibcurlsEngineBeforeLibcurlIsLoadedGetsLibcurlsOutput() async throws {
        let folder = try TempDirectory(prefix: "asyncfetch-printf")
        // The C compiler of the Swift toolchain that builds the tests.
        let (library, compiled) = try await offPool {
            try compileC(Self.early, named: "early.so", in: folder, flags: ["-shared", "-fPIC"], libraries: ["-ldl"])
        }
        try #require(compiled.status == 0, "\(compiled.stderr)")
        let cli = try CLI()
        let result = try await cli.run(["cache", "dir"], environment: ["LD_PRELOAD": library])
        #expect(result.status == 0 && result.signal == nil, "\(result.stderr)")
        let line = try #require(result.stderr.split(separator: "\n").first { $0.hasPrefix("early: ") }, "\(result.stderr)")
        #expect(line.contains(": \(CLI.binary);"), "the executable's pair: \(line)")
        #expect(line.hasSuffix("; loaded before 0, after 1; 15 [   42|x  |%|7] 005-y"), "\(line)")
    }
}
