// Writes the files that come from HappyCore's action table: web/js/protocol.js, and the
// action table's part of Fuzz/protocol.dict. `make protocol-js` runs it from the repository.
// Usage: happyprotocol [REPOSITORY]   (default: the current directory)
import Foundation
import HappyCore

let root = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? FileManager.default.currentDirectoryPath)

/// Writes `text` to `path` under the repository when it differs; says what it did.
func write(_ text: String, to path: String) throws {
    let url = root.appendingPathComponent(path)
    if (try? String(contentsOf: url, encoding: .utf8)) == text {
        print("happyprotocol: \(path) is up to date")
        return
    }
    try text.write(to: url, atomically: true, encoding: .utf8)
    print("happyprotocol: wrote \(path)")
}

do {
    try write(ProtocolScript.render(), to: "web/js/protocol.js")
    let dictionaryPath = "Fuzz/protocol.dict"
    let dictionary = try String(contentsOf: root.appendingPathComponent(dictionaryPath), encoding: .utf8)
    guard let updated = ProtocolScript.fuzzDictionary(updating: dictionary) else {
        let markers = ProtocolScript.fuzzDictionaryMarkers
        FileHandle.standardError.write(Data("happyprotocol: \(dictionaryPath) lacks the lines \"\(markers.begin)\" and \"\(markers.end)\"\n".utf8))
        exit(1)
    }
    try write(updated, to: dictionaryPath)
} catch {
    FileHandle.standardError.write(Data("happyprotocol: \(error)\n".utf8))
    exit(1)
}
