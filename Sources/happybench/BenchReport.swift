import Foundation

extension BenchRow {
    /// The row whose `key` figure is the median of `rows`.
    static func median(_ rows: [BenchRow], by key: String) -> BenchRow? {
        let sorted = rows.sorted { ($0.json[key] as? Double ?? 0) < ($1.json[key] as? Double ?? 0) }
        return sorted.isEmpty ? nil : sorted[sorted.count / 2]
    }
}

/// The table printed at the end and the JSON file written beside it.
struct BenchReport {
    let rows: [BenchRow]

    /// One table per kind of row (fan-out, frames, pointers…): rows whose
    /// columns start alike (one may add columns at the end) share a table.
    func print() {
        var groups: [[BenchRow]] = []
        for row in rows {
            let names = row.figures.map(\.0)
            if let index = groups.firstIndex(where: { group in
                let first = group[0].figures.map(\.0)
                return names.starts(with: first) || first.starts(with: names)
            }) {
                groups[index].append(row)
            } else {
                groups.append([row])
            }
        }
        for (index, group) in groups.enumerated() {
            if index > 0 { Swift.print("") }
            printTable(group)
        }
    }

    private func printTable(_ rows: [BenchRow]) {
        var columns: [String] = []
        for row in rows { for (name, _) in row.figures where !columns.contains(name) { columns.append(name) } }
        let header = ["workload"] + columns
        let table = rows.map { row in
            [row.workload] + columns.map { column in row.figures.first { $0.0 == column }?.1 ?? "" }
        }
        var widths = header.map(\.count)
        for line in table { for (index, cell) in line.enumerated() { widths[index] = max(widths[index], cell.count) } }
        func format(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == 0 ? cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                           : String(repeating: " ", count: widths[index] - cell.count) + cell
            }.joined(separator: "  ")
        }
        Swift.print(format(header))
        for line in table { Swift.print(format(line)) }
    }

    func write(to directory: String) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let path = (directory as NSString).appendingPathComponent("happybench-\(formatter.string(from: Date())).json")
        var machine: [String: Any] = ["cores": ProcessInfo.processInfo.activeProcessorCount]
        if let cpu = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
           let model = cpu.split(separator: "\n").first(where: { $0.hasPrefix("model name") }) {
            machine["cpu"] = model.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let document: [String: Any] = ["date": ISO8601DateFormatter().string(from: Date()), "machine": machine,
                                       "results": rows.map(\.json)]
        try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
            .write(to: URL(fileURLWithPath: path))
        return path
    }
}
