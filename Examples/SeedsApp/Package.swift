// swift-tools-version:6.0
// The seeds as a SwiftUI app on HappyClientKit. A package of its own, so that
// the repository's package (built on Linux, where SwiftUI does not exist)
// never builds it: open this folder in Xcode, or `swift run` on a Mac.
import PackageDescription

let package = Package(
    name: "SeedsApp",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [.package(name: "Happy", path: "../..")],
    targets: [
        .executableTarget(name: "SeedsApp", dependencies: [.product(name: "HappyClientKit", package: "Happy")]),
    ]
)
