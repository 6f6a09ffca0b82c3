// swift-tools-version:6.0
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

let package = Package(
    name: "asyncfetch",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "Support", targets: ["Support"]),
        .library(name: "ImageFormats", targets: ["ImageFormats"]),
        .library(name: "ImageDecoding", targets: ["ImageDecoding"]),
        .library(name: "Fetch", targets: ["Fetch"]),
        .library(name: "DiskCache", targets: ["DiskCache"]),
        .library(name: "HTTPCaching", targets: ["HTTPCaching"]),
        .library(name: "RemoteCache", targets: ["RemoteCache"]),
        .library(name: "Loader", targets: ["Loader"]),
        .executable(name: "asyncfetch", targets: ["asyncfetch"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", exact: "2.0.1"),
    ],
    targets: [
        // C corner: typed wrappers over libcurl's variadic API; libcurl itself is
        // loaded on first use (dlopen), so cache-only runs start fast. Only
        // Sources/Fetch/Curl imports it.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl")]),
        // C corner: streaming gzip/deflate (zlib), br (libbrotli) and zstd (libzstd)
        // decoders that report a stream cut before its end. Only Sources/Fetch/ContentDecoder.swift imports it.
        .target(name: "CDecode", linkerSettings: [
            .linkedLibrary("z"), .linkedLibrary("brotlidec"), .linkedLibrary("zstd"),
        ]),
        // C corner: OpenSSL MD5 (keys), extended attributes, O_TMPFILE, syncfs. Only DiskCache imports it.
        // OpenSSL's MD5 objects come from its libcrypto.a (libssl-dev): no libcrypto.so.3 and its
        // 21,000 relocations at every start (bench/README, session 17 start-up); TLS loads
        // libcrypto.so.3 through libcurl, untouched. No unsafe flag here, so the library products stay
        // usable as versioned dependencies; the executable hides the objects (below).
        .target(name: "CCrypto", linkerSettings: [.linkedLibrary(":libcrypto.a")]),
        // C corner: XXH3-128 body digests (libxxhash). Only Sources/DiskCache/Record/BodyHash.swift imports it.
        .target(name: "CXXHash", linkerSettings: [.linkedLibrary("xxhash")]),
        // C corner: CRC-32 (ISA-L) for the PNG chunk check. Only Sources/ImageFormats/Common/CRC32.swift imports it.
        .target(name: "CCRC", linkerSettings: [.linkedLibrary("isal")]),
        // C corner: runs before every library's initialiser (.preinit_array) to keep descriptors
        // 0-2 taken when the tool starts with one closed and to catch SIGINT and SIGTERM from the
        // start; and malloc's thresholds. Only Sources/asyncfetch/StandardStreams.swift,
        // EarlySignals.swift and MallocPolicy.swift import it.
        .target(name: "CStartup"),
        // C corner: pipe2(O_CLOEXEC) (_GNU_SOURCE only). Only Sources/Loader/Input/SelfPipe.swift imports it.
        .target(name: "CLoader"),
        // C corner: open a body with libvips (libvips-dev), read its declared size, decode every
        // pixel once. Only Sources/ImageDecoding/VipsDecoder.swift imports it; its public header
        // needs nothing from libvips, so only CVips.c sees glib's headers (Debian's paths:
        // `pkg-config --cflags vips` adds -pthread, which SwiftPM refuses with a warning).
        .target(
            name: "CVips",
            cSettings: [.unsafeFlags([
                "-I/usr/include/glib-2.0", "-I/usr/lib/x86_64-linux-gnu/glib-2.0/include",
                "-I/usr/lib/aarch64-linux-gnu/glib-2.0/include",
            ])],
            // libvips is dlopen'ed on first use (CVips.c says why), like libcurl.
            linkerSettings: [.linkedLibrary("dl")]),
        // The module graph is one-way (docs/layout.md):
        //   Support (locks, clocks, ASCII) under everything but the C corners;
        //   CCRC -> ImageFormats (pure: no I/O);
        //   Fetch, DiskCache -> HTTPCaching (pure RFC 9111 rules), RemoteCache (the tier);
        //   all of them -> Loader (phases, batches) -> the asyncfetch executable.
        .target(name: "Support", swiftSettings: strict),
        .target(name: "ImageFormats", dependencies: ["CCRC"], swiftSettings: strict),
        .target(name: "ImageDecoding", dependencies: ["CVips", "ImageFormats"], swiftSettings: strict),
        .target(name: "Fetch", dependencies: ["CCurl", "CDecode", "Support"], swiftSettings: strict),
        .target(name: "DiskCache", dependencies: ["CCrypto", "CXXHash", "Support"], swiftSettings: strict),
        .target(name: "HTTPCaching", dependencies: ["Fetch", "DiskCache", "Support"], swiftSettings: strict),
        .target(name: "RemoteCache", dependencies: ["Fetch", "DiskCache", "Support"], swiftSettings: strict),
        .target(
            name: "Loader",
            dependencies: ["CLoader", "Support", "ImageFormats", "ImageDecoding", "Fetch", "DiskCache", "HTTPCaching", "RemoteCache"],
            swiftSettings: strict),
        .executableTarget(
            name: "asyncfetch",
            dependencies: [
                "CStartup", "Loader", "Support", "ImageFormats", "ImageDecoding", "Fetch", "DiskCache", "HTTPCaching", "RemoteCache",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict,
            // Release: linked by lld with packed relative relocations (DT_RELR, glibc 2.36+). gold's
            // 40,000 relocations (975 KiB of .rela.dyn) were read at every start and stayed mapped:
            // peak RSS 0.9-1.4 MiB lower in every case, and less start-up work (bench/README, memory).
            // Link/libstdc++.so (a linker script) makes the static runtime's -lstdc++ link GCC's
            // libstdc++.a: no libstdc++.so.6 to load and relocate at every start (bench/README, session 17).
            // OpenSSL's MD5 objects (CCrypto) stay out of the executable's dynamic symbols, in every
            // build: exported, they would take the place of the libcrypto.so.3 that TLS loads.
            linkerSettings: [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                                           "-L", Context.packageDirectory + "/Link"],
                                          .when(configuration: .release)),
                             .unsafeFlags(["-Xlinker", "--exclude-libs=libcrypto.a"]),
                             // CCurl's SSL_CTX_new takes the place of libssl's for libcurl: one SSL_CTX per
                             // transfer loop, not one per TLS connection (bench/README, session 18). Its
                             // curl_strequal, curl_strnequal, curl_msnprintf and curl_maprintf take the place
                             // of libcurl's own, which handle a character at a time through a function call
                             // (bench/README, session 19); its curl_url_get answers a plain path without
                             // libcurl's byte-at-a-time encoding copy (session 20); its __isoc99_sscanf
                             // reads libcurl's status line without glibc's scanf engine (session 22).
                             .unsafeFlags(["-Xlinker", "--export-dynamic-symbol=SSL_CTX_new",
                                           "-Xlinker", "--export-dynamic-symbol=curl_strequal",
                                           "-Xlinker", "--export-dynamic-symbol=curl_strnequal",
                                           "-Xlinker", "--export-dynamic-symbol=curl_msnprintf",
                                           "-Xlinker", "--export-dynamic-symbol=curl_maprintf",
                                           "-Xlinker", "--export-dynamic-symbol=curl_url_get",
                                           "-Xlinker", "--export-dynamic-symbol=__isoc99_sscanf"])]
        ),
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: strict),
        .testTarget(name: "SupportTests", dependencies: ["Support"], swiftSettings: strict),
        .testTarget(
            name: "ImageFormatsTests",
            dependencies: ["ImageFormats", "ImageDecoding", "TestSupport", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict),
        .testTarget(
            name: "ImageDecodingTests", dependencies: ["ImageDecoding", "ImageFormats", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "FetchTests", dependencies: ["Fetch", "Support", "TestSupport"], swiftSettings: strict,
                    linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic-symbol=SSL_CTX_new",
                                                   "-Xlinker", "--export-dynamic-symbol=curl_strequal",
                                                   "-Xlinker", "--export-dynamic-symbol=curl_strnequal",
                                                   "-Xlinker", "--export-dynamic-symbol=curl_msnprintf",
                                                   "-Xlinker", "--export-dynamic-symbol=curl_maprintf",
                                           "-Xlinker", "--export-dynamic-symbol=curl_url_get",
                                           "-Xlinker", "--export-dynamic-symbol=__isoc99_sscanf"])]),
        .testTarget(name: "DiskCacheTests", dependencies: ["DiskCache", "Support", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "HTTPCachingTests", dependencies: ["HTTPCaching", "Fetch", "DiskCache"], swiftSettings: strict),
        .testTarget(
            name: "RemoteCacheTests", dependencies: ["RemoteCache", "Fetch", "DiskCache", "Support", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "LoaderTests",
            dependencies: ["Loader", "ImageFormats", "HTTPCaching", "RemoteCache", "Support", "TestSupport", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict),
        .testTarget(name: "EndToEndTests", dependencies: ["RemoteCache", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "TestSupportTests", dependencies: ["TestSupport"], swiftSettings: strict),
    ]
)
