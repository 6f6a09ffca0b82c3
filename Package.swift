// swift-tools-version:6.0
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

let package = Package(
    name: "asyncfetch",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "Fetch", targets: ["Fetch"]),
        .library(name: "DiskCache", targets: ["DiskCache"]),
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
        // C corner: OpenSSL MD5 (keys), extended attributes, O_TMPFILE, syncfs. Only DiskCache imports it.
        .target(name: "CCrypto", linkerSettings: [.linkedLibrary("crypto")]),
        // C corner: XXH3-128 body digests (libxxhash). Only Sources/DiskCache/BodyHash.swift imports it.
        .target(name: "CXXHash", linkerSettings: [.linkedLibrary("xxhash")]),
        .target(name: "Fetch", dependencies: ["CCurl"], swiftSettings: strict),
        .target(name: "DiskCache", dependencies: ["CCrypto", "CXXHash"], swiftSettings: strict),
        .target(name: "Loader", dependencies: ["Fetch", "DiskCache"], swiftSettings: strict),
        .executableTarget(
            name: "asyncfetch",
            dependencies: [
                "Loader", "Fetch", "DiskCache",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: strict),
        .testTarget(name: "FetchTests", dependencies: ["Fetch", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "DiskCacheTests", dependencies: ["DiskCache", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "LoaderTests",
            dependencies: ["Loader", "TestSupport", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport"], swiftSettings: strict),
        .testTarget(name: "TestSupportTests", dependencies: ["TestSupport"], swiftSettings: strict),
    ]
)
