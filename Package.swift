// swift-tools-version:6.0
import Foundation
import PackageDescription

/// The version `happyserver --version` and `happyclient --version` print: `make` sets
/// HAPPY_VERSION from `git describe` (scripts/version.sh); a plain `swift build` says 0.0~dev.
let versionDefine: [CSetting] = ProcessInfo.processInfo.environment["HAPPY_VERSION"].map { version in
    [.define("HAPPY_VERSION", to: "\"\(version)\"")]
} ?? []

let package = Package(
    name: "Happy",
    // Synchronization's Mutex, used by HappyCore and the client, needs macOS 15 and iOS 18.
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "happyserver", targets: ["happyserver"]),
        .executable(name: "happyrender-bench", targets: ["happyrender-bench"]),
        .executable(name: "happyclient", targets: ["happyclient"]),
        .library(name: "HappyCore", targets: ["HappyCore"]),
        .library(name: "HappyClientKit", targets: ["HappyClientKit"]),
    ],
    targets: [
        // C libraries from Debian, wrapped with a small shim header each.
        .systemLibrary(
            name: "CWebSockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]
        ),

        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),

        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),

        // libcurl, for outgoing HTTP and HTTPS.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),

        .systemLibrary(
            name: "CHiredis",
            pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),

        .systemLibrary(
            name: "CCairo",
            pkgConfig: "cairo",
            providers: [.apt(["libcairo2-dev"])]
        ),

        .systemLibrary(
            name: "CDeflate",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"])]
        ),

        // epoll and eventfd for happybench's crowd sockets (in libc; Swift's Glibc module has neither).
        .systemLibrary(name: "CEpoll"),

        // The version string, the only thing HAPPY_VERSION changes (one C function).
        .target(name: "HappyVersion", cSettings: versionDefine),

        // Pure Swift: scene, rules, wire codec, delivery policies. No C, no I/O.
        // Cross-module optimisation lets the server specialise and inline the core's
        // generics (the broadcast log, queues, the JSON writer) on its hot paths.
        .target(name: "HappyCore",
                swiftSettings: [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]),

        // Server-rendered frames: the only module that imports Cairo.
        .target(name: "HappyRender", dependencies: ["HappyCore", "CCairo", "CDeflate"]),

        // The one Swift boundary around libwebsockets, shared by server and client:
        // connections, user data, callbacks, timers, contexts, message assembly.
        .target(name: "HappyLWS", dependencies: ["CWebSockets", "HappyCore"]),

        // The server: the only module that touches libwebsockets on the server side.
        .target(
            name: "HappyServer",
            dependencies: ["HappyCore", "HappyRender", "HappyLWS", "COpenSSL"],
            // Every object here is owned by the one service thread; in release
            // builds the runtime's dynamic exclusivity bookkeeping (thread-local
            // access sets on each class-property mutation) cost about a fifth of
            // the fan-out path under callgrind. Static checks stay on.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),

        // Blocking HTTP requests on libcurl: the only module that imports it.
        .target(name: "HappyCurl", dependencies: ["CCurl"]),

        // The durable room store on SQLite (WAL, group commit).
        .target(name: "HappySQLite", dependencies: ["HappyCore", "CSQLite"]),

        // Rooms shared by several nodes through Redis (hiredis).
        .target(name: "HappyRedis", dependencies: ["HappyCore", "CHiredis"]),

        // The client's transport seam, pure Swift: WebSocket URLs and options, a
        // connection's events and the `HappyTransport` protocol transports implement.
        .target(name: "HappyClientTransport"),

        // The libwebsockets client transport (`ClientLoop`, `WebSocketConnection`,
        // `LWSTransport`): the client's only C dependency, on Linux only.
        .target(name: "HappyClientLWS", dependencies: ["HappyClientTransport", "HappyLWS"]),

        // The client library, pure Swift over `HappyTransport`: a room session
        // (reconnect, resume, heartbeat, intents matched to their answers), the
        // async API, the seeds' views, the URLSession and in-memory transports.
        // Apple platforms never see HappyClientLWS or a C target.
        .target(
            name: "HappyClientKit",
            dependencies: [
                "HappyCore", "HappyClientTransport",
                .target(name: "HappyClientLWS", condition: .when(platforms: [.linux])),
            ]
        ),

        // The terminal client: argument parser, commands, output, the `play` screen.
        .target(name: "HappyClientCLI", dependencies: ["HappyClientKit", "HappyCore", "HappyRender", "HappyCurl", "HappyVersion"]),

        // Examples of HappyClientKit, built with everything and run by the tests.
        .executableTarget(name: "Quickstart", dependencies: ["HappyClientKit"], path: "Examples/Quickstart"),
        .executableTarget(name: "SeedController", dependencies: ["HappyClientKit"], path: "Examples/SeedController"),
        .executableTarget(name: "RoomTour", dependencies: ["HappyClientKit"], path: "Examples/RoomTour"),
        .executableTarget(name: "happyserver",
                          dependencies: ["HappyServer", "HappyCore", "HappySQLite", "HappyRedis", "HappyCurl", "HappyVersion"]),
        .executableTarget(name: "happyclient", dependencies: ["HappyClientCLI"]),
        // Benchmark driver: starts servers and drives the workloads of `make bench`.
        .executableTarget(name: "happybench", dependencies: ["HappyClientKit", "CEpoll"]),
        // Writes web/js/protocol.js and Fuzz/protocol.dict's actions from HappyCore's action table (`make protocol-js`).
        .executableTarget(name: "happyprotocol", dependencies: ["HappyCore"]),
        // Render+encode timings per view (part of `make bench`).
        .executableTarget(name: "happyrender-bench", dependencies: ["HappyRender", "HappyCore"]),

        .testTarget(name: "HappyCoreTests", dependencies: ["HappyCore"]),
        .testTarget(name: "HappySQLiteTests", dependencies: ["HappySQLite", "HappyCore"]),
        .testTarget(name: "HappyRenderTests", dependencies: ["HappyRender", "HappyCore"]),
        .testTarget(name: "HappyLWSTests", dependencies: ["HappyLWS", "HappyCore"]),
        .testTarget(name: "HappyCurlTests", dependencies: ["HappyCurl"]),
        .testTarget(name: "HappyClientKitTests", dependencies: ["HappyClientKit", "HappyCore"]),
        .testTarget(name: "HappyClientCLITests", dependencies: ["HappyClientCLI", "HappyClientKit", "HappyCore"]),
        // The server's components in-process: fake transports, a manual clock, no sockets.
        .testTarget(name: "HappyServerComponentTests", dependencies: ["HappyServer", "HappyCore", "HappyRender", "HappyLWS"]),
        // Integration tests: the real happyserver binary on an ephemeral port, real clients.
        .testTarget(
            name: "HappyServerTests",
            dependencies: ["HappyCore", "HappyServer", "HappySQLite", "HappyClientKit", "happyserver", "happyclient"]
        ),
    ]
)
