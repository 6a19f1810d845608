// swift-tools-version:6.0
// Guildhall: guild/channel messaging server, client SDK and CLI.
// Swift 6 language mode throughout (tools version 6.0 implies it).
import PackageDescription

// The loop's state is confined to one thread by design (docs/architecture.md), each store
// connection to its thread, and wire messages are values: the run-time
// exclusivity checks on class properties buy nothing there and cost about 4%
// of a fan-out (perf, bench fanout shape A) and 3.5% of the store shape
// (swift_beginAccess in the generated messages' storage). Debug builds keep them.
let hotPath: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "Guildhall",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "guildhall", targets: ["guildhall"]),
        .executable(name: "guildhall-lab", targets: ["guildhall-lab"]),
        .library(name: "GuildhallClient", targets: ["GuildhallClient"]),
        .library(name: "GuildhallServer", targets: ["GuildhallServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // C libraries from Debian packages.
        .systemLibrary(name: "CLibUV", path: "Sources/CLibUV", pkgConfig: "libuv", providers: [.apt(["libuv1-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Debian ships no pkg-config file for it: the module map links it by name.
        .systemLibrary(name: "CHTTPParser", path: "Sources/CHTTPParser", providers: [.apt(["libhttp-parser-dev"])]),
        .systemLibrary(name: "CWSLay", path: "Sources/CWSLay", providers: [.apt(["libwslay-dev"])]),
        .systemLibrary(name: "CNATS", path: "Sources/CNATS", pkgConfig: "libnats", providers: [.apt(["libnats-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // The process's malloc (docs/performance.md, "The allocator").
        .systemLibrary(name: "CJemalloc", path: "Sources/CJemalloc", pkgConfig: "jemalloc", providers: [.apt(["libjemalloc-dev"])]),

        // The version and commit this binary was built from (VERSION, git), stamped before every build.
        .plugin(name: "BuildStamp", capability: .buildTool()),
        .target(name: "GuildhallBuild", plugins: ["BuildStamp"]),

        // Pure domain: no I/O.
        .target(name: "GuildhallCore", dependencies: [.product(name: "Crypto", package: "swift-crypto")], swiftSettings: hotPath),
        // Generated protobuf types and the frame codec.
        .target(name: "GuildhallWire", dependencies: [.product(name: "SwiftProtobuf", package: "swift-protobuf")], swiftSettings: hotPath),
        // A thin Swift face over libuv; knows nothing of chat.
        // TLS as a state machine over memory buffers (OpenSSL 3): the loop's connections and the SDK's sockets use it.
        .target(name: "GuildhallTLS", dependencies: ["COpenSSL"]),
        .target(name: "GuildhallLoop", dependencies: ["CLibUV", "CHTTPParser", "CWSLay", "GuildhallTLS"], swiftSettings: hotPath),
        // SQLite schema, migrations, writer and reader threads.
        .target(name: "GuildhallStore", dependencies: ["CSQLite", "GuildhallCore"], swiftSettings: hotPath),
        // Files (docs/files.md): the stores attachments live in, and AWS Signature V4 for S3.
        .target(name: "GuildhallFiles", dependencies: ["CCurl", .product(name: "Crypto", package: "swift-crypto")]),
        // Sessions, dispatch, interest index, fan-out, configuration.
        .target(name: "GuildhallServer", dependencies: ["GuildhallBuild", "GuildhallTLS", "GuildhallCore", "GuildhallWire", "GuildhallLoop", "GuildhallStore", "GuildhallFiles", "CNATS", "CJemalloc",
                                                      .product(name: "Crypto", package: "swift-crypto"),
                                                      .product(name: "JWTKit", package: "jwt-kit"),
                                                      .product(name: "Prometheus", package: "swift-prometheus"),
                                                      .product(name: "Logging", package: "swift-log")],
                swiftSettings: hotPath),
        // The client SDK.
        .target(name: "GuildhallClient", dependencies: ["GuildhallWire", "GuildhallTLS"]),
        .executableTarget(name: "guildhall", dependencies: [
            "GuildhallBuild", "GuildhallServer", "GuildhallClient", "GuildhallCore", "GuildhallWire", "GuildhallStore", "GuildhallLoop", "GuildhallTLS",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // The benchmarks and the reliability runner: the lab, not the product.
        .executableTarget(name: "guildhall-lab", dependencies: [
            "GuildhallBuild", "GuildhallServer", "GuildhallClient", "GuildhallCore", "GuildhallWire", "GuildhallStore", "GuildhallLoop",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        .testTarget(name: "GuildhallCoreTests", dependencies: ["GuildhallCore"]),
        .testTarget(name: "GuildhallWireTests", dependencies: ["GuildhallWire"]),
        .testTarget(name: "GuildhallLoopTests", dependencies: ["GuildhallLoop", "GuildhallWire"]),
        .testTarget(name: "GuildhallStoreTests", dependencies: ["GuildhallStore", "GuildhallCore", "CPowerLoss"]),
        .testTarget(name: "GuildhallFilesTests", dependencies: ["GuildhallFiles"]),
        // A test SQLite VFS that shows what a power loss would leave (docs/reliability.md D3), and a full disk; tests only.
        .target(name: "CPowerLoss", dependencies: ["CSQLite"], path: "Tests/CPowerLoss"),
        .testTarget(name: "GuildhallEndToEndTests", dependencies: ["GuildhallBuild", "GuildhallTLS", "GuildhallServer", "GuildhallClient", "GuildhallCore", "GuildhallWire", "GuildhallLoop", "GuildhallFiles",
                                                                  "CPowerLoss", .product(name: "Logging", package: "swift-log"),
                                                                  .product(name: "JWTKit", package: "jwt-kit"), .product(name: "Crypto", package: "swift-crypto")],
                    exclude: ["Fixtures"]),
    ]
)

// The libFuzzer targets (docs/reliability.md B4), only for `make fuzz`: built with
// -sanitize=fuzzer, whose runtime supplies main, so an ordinary build would
// fail to link them.
if Context.environment["GUILDHALL_FUZZ"] != nil {
    package.targets.append(.executableTarget(name: "guildhall-fuzz", dependencies: ["GuildhallWire", "GuildhallLoop"], path: "Fuzz/GuildhallFuzz",
                                             swiftSettings: [.unsafeFlags(["-parse-as-library"])]))
}
