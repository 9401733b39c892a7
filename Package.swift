// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Happy",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "happyserver", targets: ["happyserver"]),
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

        // Pure Swift: scene, rules, wire codec, delivery policies. No C, no I/O.
        .target(name: "HappyCore"),

        // The server: the only module that touches libwebsockets on the server side.
        .target(name: "HappyServer", dependencies: ["HappyCore", "CWebSockets", "COpenSSL"]),

        // The durable room store on SQLite (WAL, group commit).
        .target(name: "HappySQLite", dependencies: ["HappyCore", "CSQLite"]),

        // WebSocket client on the libwebsockets client API.
        .target(name: "HappyClientKit", dependencies: ["HappyCore", "CWebSockets"]),

        .executableTarget(name: "happyserver", dependencies: ["HappyServer", "HappyCore", "HappySQLite"]),

        .testTarget(name: "HappyCoreTests", dependencies: ["HappyCore"]),
        .testTarget(name: "HappySQLiteTests", dependencies: ["HappySQLite", "HappyCore"]),
        // Integration tests: the real happyserver binary on an ephemeral port, real clients.
        .testTarget(
            name: "HappyServerTests",
            dependencies: ["HappyCore", "HappyServer", "HappyClientKit", "happyserver"]
        ),
    ]
)
