// swift-tools-version:6.1
import PackageDescription

/// Settings every Swift target shares: Swift 6 language mode is the package default;
/// these add the upcoming-feature flags the house style asks for.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "cohort",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "cohort", targets: ["cohort"]),
        .executable(name: "cohort-bench", targets: ["cohort-bench"]),
        .library(name: "CohortKit", targets: ["CohortKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        .systemLibrary(
            name: "CPCRE2",
            pkgConfig: "libpcre2-8",
            providers: [.apt(["libpcre2-dev"])]
        ),
        // libpq's header (libpq-dev) at build time; the library itself is loaded on first use
        // (Sources/CLibPQ/loader.c), so only PostgreSQL work maps it.
        .target(name: "CLibPQ"),
        .target(
            name: "CohortCore",
            dependencies: [.product(name: "Yams", package: "Yams")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CohortIO",
            dependencies: [
                "CohortCore", .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CohortCrypto",
            dependencies: ["CohortCore", "CohortIO", "COpenSSL"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CohortCompression",
            dependencies: ["CohortCore", "CohortIO", "CZlib"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CohortStore",
            dependencies: ["CohortCore", "CohortCrypto", "CohortCompliance", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CohortPostgres",
            dependencies: ["CohortCore", "CLibPQ"],
            swiftSettings: swiftSettings
        ),
        // Test infrastructure kept out of the library: a throwaway PostgreSQL cluster for the
        // tests and the benchmark (cohort-bench), never linked into CohortKit or `cohort`.
        .target(
            name: "CohortTestSupport",
            dependencies: ["CohortCore", "CohortPostgres"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CohortStorePostgres",
            dependencies: ["CohortCore", "CohortCrypto", "CohortStore", "CohortPostgres"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CohortImport",
            dependencies: ["CohortCore", "CohortIO", "CohortPostgres", "CZlib", "CLibXML2"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CohortCompliance",
            dependencies: ["CohortCore"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CohortDeid",
            dependencies: ["CohortCore", "CohortIO", "CohortCrypto", "CPCRE2", .product(name: "Yams", package: "Yams")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CohortExport",
            dependencies: ["CohortCore", "CohortIO", "CohortCrypto"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CohortPackage",
            dependencies: ["CohortCore", "CohortIO", "CohortCrypto", "CohortCompression"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CohortDemo",
            dependencies: ["CohortCore", "CohortImport", "CohortDeid"],
            swiftSettings: swiftSettings
        ),
        // Delivery over SFTP: the system OpenSSH client carries the connection (host key pinning,
        // authentication); this target speaks SFTP v3 over it.
        .target(
            name: "CohortDelivery",
            dependencies: ["CohortCore", "CohortCrypto"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CohortKit",
            dependencies: [
                "CohortCore", "CohortIO", "CohortCrypto", "CohortDelivery", "CohortStore", "CohortImport", "CohortCompliance",
                "CohortDeid", "CohortExport", "CohortPackage", "CohortDemo", "CohortStorePostgres", "CohortCompression",
                .product(name: "Mustache", package: "swift-mustache"), .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "cohort",
            dependencies: [
                "CohortKit", "CohortCore", "CohortCompliance", "CohortCrypto", "CohortDeid", "CohortDelivery", "CohortImport", "CohortPackage",
                "CohortStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "cohort-bench",
            dependencies: [
                "CohortKit", "CohortCore", "CohortCrypto", "CohortDelivery", "CohortStore", "CohortCompliance", "CohortPackage", "CohortDemo", "CohortPostgres",
                "CohortImport", "CohortIO",
                "CohortTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // Test-only: `cohort export` held after its snapshot through a package hook (no product; the
        // end-to-end tests run it next to `cohort`, which reads no test hook from its environment).
        .executableTarget(
            name: "cohort-export-paused",
            dependencies: ["CohortKit", "CohortCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "CohortCoreTests", dependencies: ["CohortCore"], swiftSettings: swiftSettings),
        .testTarget(name: "CohortIOTests", dependencies: ["CohortIO", "CohortCore"], swiftSettings: swiftSettings),
        .testTarget(name: "CohortCryptoTests", dependencies: ["CohortCrypto", "CohortCore"], swiftSettings: swiftSettings),
        .testTarget(name: "CohortCompressionTests", dependencies: ["CohortCompression", "CohortCore", "CohortIO"], swiftSettings: swiftSettings),
        .testTarget(name: "CohortStoreTests", dependencies: ["CohortStore", "CohortStorePostgres", "CohortPostgres", "CohortCore", "CohortCrypto", "CohortTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "CohortDemoTests", dependencies: ["CohortDemo", "CohortCore", "CohortDeid"], swiftSettings: swiftSettings),
        .testTarget(name: "CohortComplianceTests", dependencies: ["CohortCompliance", "CohortCore"], swiftSettings: swiftSettings),
        .testTarget(name: "CohortDeidTests", dependencies: ["CohortDeid", "CohortCore", "CohortCrypto", "CohortIO"], exclude: ["Fixtures"], swiftSettings: swiftSettings),
        .testTarget(name: "CohortExportTests", dependencies: ["CohortExport", "CohortCore"], exclude: ["Golden"], swiftSettings: swiftSettings),
        .testTarget(name: "CohortPackageTests", dependencies: ["CohortPackage", "CohortCore", "CohortCrypto", "CohortCompression", "CohortIO"], swiftSettings: swiftSettings),
        .testTarget(
            name: "CohortImportTests", dependencies: ["CohortImport", "CohortCore", "CohortIO", "CohortPostgres", "CZlib", "CohortTestSupport"], exclude: ["Fixtures"], swiftSettings: swiftSettings),
        .testTarget(
            name: "CohortStorePostgresTests", dependencies: ["CohortStorePostgres", "CohortStore", "CohortPostgres", "CohortCore", "CohortCrypto", "CohortTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CohortKitTests",
            dependencies: [
                "CohortKit", "CohortCore", "CohortCompliance", "CohortStore", "CohortCrypto", "CohortDeid", "CohortPackage", "CohortPostgres", "CohortStorePostgres",
                "CohortTestSupport",
            ],
            swiftSettings: swiftSettings),
        // The end-to-end tests run the built `cohort` binary (and the test-only `cohort-export-paused`); they link no cohort module.
        // (CohortTestSupport for its throwaway PostgreSQL cluster; CohortPostgres to query it; CohortDemo for the scrub corpora.)
        .testTarget(name: "CLITests", dependencies: ["cohort", "cohort-export-paused", "CohortPostgres", "CohortTestSupport", "CohortDemo"], swiftSettings: swiftSettings),
    ]
)
