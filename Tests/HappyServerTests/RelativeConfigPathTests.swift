import Foundation
import HappyCore
import XCTest

/// Relative paths in the configuration (`webRoot`, `dataDir`, `tls.*`) are
/// relative to the configuration file's folder (README), whatever folder the
/// server is started from.
final class RelativeConfigPathTests: XCTestCase {
    private var base: URL!
    /// The configuration file's folder, with the page, the data and the certificates below it.
    private var configFolder: URL!
    /// Another folder to start the server from.
    private var elsewhere: URL!

    override func setUpWithError() throws {
        base = FileManager.default.temporaryDirectory.appendingPathComponent("happy-paths-\(UUID().uuidString.prefix(8))")
        configFolder = base.appendingPathComponent("conf")
        elsewhere = base.appendingPathComponent("elsewhere")
        let site = configFolder.appendingPathComponent("site")
        for folder in [site.appendingPathComponent("assets"), elsewhere!] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        try Data("<!doctype html><title>relative site</title>".utf8).write(to: site.appendingPathComponent("index.html"))
        try FileManager.default.copyItem(
            at: ServerProcess.repositoryRoot.appendingPathComponent("web/assets/scene-art.json"),
            to: site.appendingPathComponent("assets/scene-art.json"))
    }

    override func tearDown() {
        if let base { try? FileManager.default.removeItem(at: base) }
    }

    func testThePageAndTheDataAreFoundBesideTheConfigFile() throws {
        let server = try ServerProcess(["webRoot": "site", "dataDir": "store"], directory: configFolder,
                                       workingDirectory: elsewhere)
        XCTAssertTrue(server.logText.contains("webRoot=\(configFolder.path)/site"), server.logText)
        let page = try HTTP.get("\(server.httpBase)/")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains("relative site"), "the page from the config's folder: \(page.text.prefix(200))")
        let posted = try HTTP.post("\(server.httpBase)/api/intent?room=paths", body: #"{"action":"face.setHappiness","value":33}"#)
        XCTAssertEqual(posted.status, 200)

        XCTAssertEqual(server.stop(), 0)
        let database = configFolder.appendingPathComponent("store/happy.sqlite3")
        XCTAssertTrue(FileManager.default.fileExists(atPath: database.path), "the store is beside the config file")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path), [],
                       "nothing is written where the server was started")

        // From yet another folder, the same data.
        server.workingDirectory = FileManager.default.temporaryDirectory
        try server.start()
        let state = try XCTUnwrap(HTTP.get("\(server.httpBase)/api/state?room=paths").json)
        XCTAssertEqual(state["seq"]?.intValue, 1)
        XCTAssertEqual(state["state"]?["face"]?["happiness"]?.intValue, 33)
        server.stop()
    }

    func testCertificatesAreFoundBesideTheConfigFile() throws {
        let tls = configFolder.appendingPathComponent("tls")
        try FileManager.default.createDirectory(at: tls, withIntermediateDirectories: true)
        let made = try TLSTests.runTool("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
            "-keyout", tls.appendingPathComponent("key.pem").path, "-out", tls.appendingPathComponent("cert.pem").path,
        ])
        XCTAssertEqual(made.status, 0, made.output)
        let server = try ServerProcess(["webRoot": "site", "dataDir": "store",
                                        "tls": ["cert": "tls/cert.pem", "key": "tls/key.pem"]],
                                       directory: configFolder, workingDirectory: elsewhere)
        XCTAssertTrue(server.logText.contains("url=https://"), server.logText)
        let health = try TLSTests.runTool("/usr/bin/curl", ["-k", "-s", "--max-time", "10",
                                                            "https://127.0.0.1:\(server.port)/healthz"])
        XCTAssertEqual(health.status, 0, health.output)
        XCTAssertEqual(health.output, "ok")
        server.stop()
    }
}
