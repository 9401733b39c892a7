import Foundation
import XCTest

/// An app for iOS or macOS that adds HappyClientKit must not have to build a
/// C library. This machine cannot build for those platforms, so the package
/// graph says it: `swift package describe` gives each target's kind and
/// dependencies, `dump-package` the platform conditions on them.
final class PackageGraphTests: XCTestCase {
    private struct Description: Decodable {
        struct Target: Decodable {
            var name: String
            var module_type: String
            var target_dependencies: [String]?
        }

        struct Product: Decodable {
            var name: String
            var targets: [String]
        }

        var targets: [Target]
        var products: [Product]
    }

    private static let applePlatforms: Set = ["macos", "maccatalyst", "ios", "tvos", "watchos", "visionos"]

    func testTheKitsGraphOnApplePlatformsHasNoCTargetAndNoLibwebsockets() throws {
        let description = try JSONDecoder().decode(Description.self, from: try Self.swiftPackage("describe", "--type", "json"))
        let conditions = try Self.platformConditions()
        let kinds = Dictionary(uniqueKeysWithValues: description.targets.map { ($0.name, $0.module_type) })
        let edges = Dictionary(uniqueKeysWithValues: description.targets.map { ($0.name, $0.target_dependencies ?? []) })
        XCTAssertEqual(description.products.first { $0.name == "HappyClientKit" }?.targets, ["HappyClientKit"])

        func closure(on platform: String) -> Set<String> {
            var seen: Set<String> = [], pending = ["HappyClientKit"]
            while let target = pending.popLast() {
                guard seen.insert(target).inserted else { continue }
                for dependency in edges[target] ?? [] {
                    // An edge with no condition holds everywhere.
                    let platforms = conditions["\(target) -> \(dependency)"]
                    if platforms == nil || platforms!.contains(platform) { pending.append(dependency) }
                }
            }
            return seen
        }

        let linux = closure(on: "linux")
        XCTAssertTrue(linux.isSuperset(of: ["HappyClientLWS", "HappyLWS", "CWebSockets"]),
                      "on Linux the kit has the libwebsockets transport (and the test can see a C target): \(linux)")
        XCTAssertEqual(kinds["CWebSockets"], "SystemLibraryTarget")
        XCTAssertEqual(conditions["HappyClientKit -> HappyClientLWS"], ["linux"], "the libwebsockets transport: Linux only")
        for platform in Self.applePlatforms.sorted() {
            let graph = closure(on: platform)
            XCTAssertEqual(graph, ["HappyClientKit", "HappyClientTransport", "HappyCore"], platform)
            for target in graph {
                XCTAssertEqual(kinds[target], "SwiftTarget", "\(platform): \(target) is not pure Swift")
            }
        }
    }

    /// The graph would not help if the kit's code named the Linux-only module
    /// outside `#if os(Linux)`: an Apple build would then fail to compile.
    func testTheKitsSourcesNameTheLibwebsocketsTransportOnlyInLinuxBlocks() throws {
        let linuxOnly: Set = ["HappyClientLWS", "HappyLWS", "ClientLoop", "LWSTransport", "WebSocketConnection",
                         "WebSocketDelegate", "TCPProbe", "ClientError", "Glibc"]
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var checked = 0
        for module in ["HappyClientKit", "HappyClientTransport"] {
            let directory = root.appendingPathComponent("Sources/\(module)")
            let files = FileManager.default.enumerator(atPath: directory.path)?.compactMap { $0 as? String } ?? []
            for file in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                var blocks: [(condition: String, inElse: Bool)] = []
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.trimmingCharacters(in: .whitespaces)
                    if code.hasPrefix("#if ") { blocks.append((String(code.dropFirst(4)), false)) }
                    if code.hasPrefix("#elseif ") { blocks[blocks.count - 1] = (String(code.dropFirst(8)), false) }
                    if code == "#else" { blocks[blocks.count - 1].inElse = true }
                    if code == "#endif" { blocks.removeLast() }
                    guard !code.hasPrefix("//"), !Self.identifiers(in: code).isDisjoint(with: linuxOnly) else { continue }
                    checked += 1
                    XCTAssertTrue(blocks.contains { $0.condition == "os(Linux)" && !$0.inElse },
                                  "\(module)/\(file):\(number + 1) outside #if os(Linux): \(code)")
                }
            }
        }
        XCTAssertGreaterThan(checked, 0, "the kit does use the libwebsockets transport on Linux")
    }

    /// The names a line of code uses, string literals left out.
    private static func identifiers(in code: String) -> Set<String> {
        var outsideStrings = "", inString = false
        for character in code {
            if character == "\"" { inString.toggle() } else if !inString { outsideStrings.append(character) }
        }
        let parts = outsideStrings.split { !($0.isLetter || $0.isNumber || $0 == "_") }
        return Set(parts.map(String.init))
    }

    /// "Target -> Dependency" to the platforms a conditional dependency holds on.
    private static func platformConditions() throws -> [String: Set<String>] {
        let manifest = try JSONSerialization.jsonObject(with: try swiftPackage("dump-package")) as? [String: Any]
        var conditions: [String: Set<String>] = [:]
        for target in manifest?["targets"] as? [[String: Any]] ?? [] {
            let name = target["name"] as? String ?? ""
            for dependency in target["dependencies"] as? [[String: Any]] ?? [] {
                // {"byName": [name, condition]}, {"target": [name, condition]}, {"product": [name, package, …, condition]}
                guard let parts = dependency.values.first as? [Any], let dependencyName = parts.first as? String,
                      let condition = parts.last as? [String: Any],
                      let platforms = condition["platformNames"] as? [String] else { continue }
                conditions["\(name) -> \(dependencyName)"] = Set(platforms)
            }
        }
        return conditions
    }

    /// Runs `swift package …` on this repository, in a scratch directory of its
    /// own (the test runs while `swift test` holds the package's).
    private static func swiftPackage(_ arguments: String...) throws -> Data {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("happy-graph-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let process = Process()
        process.executableURL = try swiftExecutable()
        process.arguments = ["package", "--package-path", root.path, "--scratch-path", scratch.path] + arguments
        let output = Pipe()
        let errorLog = scratch.appendingPathComponent("stderr.txt")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: errorLog.path, contents: nil)
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorLog)
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let complaint = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
            throw GraphError("swift package \(arguments.joined(separator: " ")) failed: \(complaint)")
        }
        return data
    }

    /// `swift` from PATH, else the one of the toolchain this test runs on.
    private static func swiftExecutable() throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("swift")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        // The Swift runtime this process loaded lives in <toolchain>/usr/lib/swift/<os>/.
        let maps = (try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)) ?? ""
        if let line = maps.split(separator: "\n").first(where: { $0.hasSuffix("/libswiftCore.so") }),
           let start = line.firstIndex(of: "/") {
            let library = URL(fileURLWithPath: String(line[start...]))
            let usr = library.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            let candidate = usr.appendingPathComponent("bin/swift")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw GraphError("no swift executable on PATH or beside the Swift runtime")
    }
}

private struct GraphError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
