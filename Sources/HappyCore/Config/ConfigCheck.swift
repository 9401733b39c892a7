/// `happyserver check-config`: every problem of a configuration file, and its effective
/// settings with secrets redacted. Both follow `HappyConfig`'s structure (its stored properties
/// are the file's keys), so a new key needs no change here.
public enum ConfigCheck {
    /// Every problem of the configuration `text`, in the order the reader meets them: after each
    /// one the key at fault is dropped and the rest read again, so one bad key does not hide the
    /// next. Empty when the text is a valid configuration.
    public static func problems(in text: String, source: String = "config.json") -> [ConfigError] {
        var json: JSONValue
        do {
            json = try JSONParser.parse(text)
        } catch {
            return [ConfigError("\(source): not valid JSON (\(error))")]
        }
        var problems: [ConfigError] = []
        var named = Set<String>()
        // Each round drops a key; a file cannot have more problems than it has keys.
        for _ in 0...json.keyCount {
            do {
                var reader = ConfigReader(source: source)
                var config = HappyConfig()
                try reader.read(json, into: &config)
                try config.validate(source: source)
                return problems
            } catch {
                guard let key = error.key else { return problems + [error] }
                if named.insert(key).inserted {
                    problems.append(error)
                    if let rest = json.removing(ConfigKeyPath(key)) {
                        json = rest
                        continue
                    }
                }
                // The rule still fails with the key gone (at its default): a consequence of a
                // problem already named, such as scene.scaleMax below a bad scene.scaleMin, or a
                // webhook whose bad events were dropped. Drop the nearest enclosing key and go on.
                guard let rest = ConfigKeyPath(key).parents.lazy.compactMap({ json.removing($0) }).first else {
                    return problems
                }
                json = rest
            }
        }
        return problems
    }
}

extension HappyConfig {
    /// The keys a section takes (`""` for the top level, `limits`, `webhooks[0]`), read from the
    /// stored properties of its defaults; empty for a path that is no section.
    public static func keys(under section: String) -> [String] {
        var value: Any = HappyConfig()
        for component in ConfigKeyPath(section).components {
            switch component {
            case .key(let name):
                guard let child = Mirror(reflecting: value).children.first(where: { $0.label == name }) else { return [] }
                value = child.value
            case .index:
                guard let template = listEntryTemplates[String(describing: type(of: value))] else { return [] }
                value = template
            }
        }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .struct else { return [] }
        return mirror.children.compactMap(\.label)
    }

    /// An entry of each list of objects, by the list's type, for the keys of its entries.
    private static let listEntryTemplates: [String: any Sendable] = [
        String(describing: [Webhook].self): Webhook(url: "", events: [], secret: ""),
    ]

    /// The settings as `key = value` lines (values in JSON, lists of objects one key per line as
    /// `webhooks[0].url`), secrets redacted (see `ConfigRedaction`); a value that differs from
    /// the default ends with `# default: …`.
    public func settingLines() -> [String] {
        let settings = ConfigSettings.flatten(self)
        var defaults: [String: String] = [:]
        for (key, value) in ConfigSettings.flatten(HappyConfig()) { defaults[key] = value }
        let width = settings.map(\.key.count).max() ?? 0
        return settings.map { key, value in
            var line = key + String(repeating: " ", count: width - key.count) + " = " + value
            if let fallback = defaults[key], fallback != value { line += "   # default: \(fallback)" }
            return line
        }
    }
}

/// A section with optional keys whose value, while unset, another setting decides: `check-config`
/// prints that value rather than `null`.
protocol ConfigDecidedValues {
    /// The value of each such key, by its name.
    var decidedValues: [String: any Sendable] { get }
}

extension HappyConfig.ClusterSection: ConfigDecidedValues {
    var decidedValues: [String: any Sendable] { ["minReplicaAcks": replicaAcks] }
}

/// Walks a configuration value by its stored properties.
enum ConfigSettings {
    /// `(key path, value as JSON)` for every setting of `config`, in declaration order.
    static func flatten(_ config: HappyConfig) -> [(key: String, value: String)] {
        var out: [(key: String, value: String)] = []
        walk(config, path: "", into: &out)
        return out
    }

    private static func walk(_ value: Any, path: String, into out: inout [(key: String, value: String)]) {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .struct?:
            let decided = (value as? any ConfigDecidedValues)?.decidedValues ?? [:]
            for child in mirror.children {
                guard let label = child.label else { continue }
                let isUnset = Mirror(reflecting: child.value).displayStyle == .optional
                    && Mirror(reflecting: child.value).children.isEmpty
                var shown: Any = child.value
                if isUnset, let value = decided[label] { shown = value }
                walk(shown, path: path.isEmpty ? label : "\(path).\(label)", into: &out)
            }
        case .collection? where mirror.children.contains(where: { Mirror(reflecting: $0.value).displayStyle == .struct }):
            for (index, child) in mirror.children.enumerated() {
                walk(child.value, path: "\(path)[\(index)]", into: &out)
            }
        default:
            out.append((path, render(value, key: path)))
        }
    }

    /// One value as JSON, redacted if `key` names a secret or it is a URL with credentials.
    private static func render(_ value: Any, key: String) -> String {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return "null" }
            return render(wrapped, key: key)
        }
        if mirror.displayStyle == .collection {
            return "[" + mirror.children.map { render($0.value, key: key) }.joined(separator: ", ") + "]"
        }
        switch value {
        case let bool as Bool: return bool ? "true" : "false"
        case let int as Int: return String(int)
        case let double as Double:
            return double == double.rounded() && abs(double) < 1e15 ? String(Int(double)) : String(double)
        case let text as String: return quoted(ConfigRedaction.redact(text, key: key))
        case let choice as any RawRepresentable: return render(choice.rawValue, key: key)
        default: return quoted(String(describing: value))
        }
    }

    private static func quoted(_ text: String) -> String {
        var writer = JSONWriter()
        writer.string(text)
        return writer.text
    }
}

/// What `check-config` hides: the values of secret keys, and the credentials, query and fragment
/// of URLs (a Redis password, a webhook's token in its query).
public enum ConfigRedaction {
    /// What stands for a hidden value.
    public static let mark = "(redacted)"

    /// Words that make a key's value secret wherever the key is (`auth.secret`, `webhooks[].secret`).
    static let secretWords = ["secret", "password", "passphrase", "token", "credential"]

    /// `value` as printed under `key`: hidden when the key's last name holds a secret word (an
    /// empty value stays visible: it says the secret is unset), a URL without its credentials,
    /// query and fragment, otherwise as it is.
    public static func redact(_ value: String, key: String) -> String {
        let name = (key.split(separator: ".").last.map(String.init) ?? key).lowercased()
        if !value.isEmpty, secretWords.contains(where: { name.contains($0) }) { return mark }
        return redactURL(value)
    }

    /// `scheme://user:pass@host/path?query#fragment` → `scheme://(redacted)@host/path?(redacted)`;
    /// text that is no URL is returned as it is.
    public static func redactURL(_ text: String) -> String {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return text }
        let scheme = text[..<colon]
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) else { return text }
        var rest = text[text.index(colon, offsetBy: 3)...]
        var tail = ""
        if let mark = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            tail = String(rest[mark]) + Self.mark
            rest = rest[..<mark]
        }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = Self.mark + authority[at...] }
        return scheme + "://" + authority + rest[authorityEnd...] + tail
    }
}

/// A dotted key path with list indexes: `webhooks[0].url`.
struct ConfigKeyPath {
    enum Component: Equatable {
        case key(String)
        case index(Int)
    }

    let components: [Component]

    /// The paths that enclose this one, nearest first: `webhooks[0].url` → `webhooks[0]`, `webhooks`.
    var parents: [ConfigKeyPath] {
        (1..<max(1, components.count)).reversed().map { ConfigKeyPath(components: Array(components.prefix($0))) }
    }

    init(components: [Component]) {
        self.components = components
    }

    init(_ text: String) {
        var components: [Component] = []
        for part in text.split(separator: ".") {
            var name = Substring(part)
            var indexes: [Int] = []
            while name.hasSuffix("]"), let open = name.lastIndex(of: "["), let index = Int(name[name.index(after: open)..<name.index(before: name.endIndex)]) {
                indexes.insert(index, at: 0)
                name = name[..<open]
            }
            if !name.isEmpty { components.append(.key(String(name))) }
            components += indexes.map(Component.index)
        }
        self.components = components
    }
}

extension JSONValue {
    /// The number of keys at every depth, list entries' included.
    var keyCount: Int {
        switch self {
        case .object(let members): return members.reduce(members.count) { $0 + $1.value.keyCount }
        case .array(let items): return items.reduce(0) { $0 + $1.keyCount }
        default: return 0
        }
    }

    /// This value without what `path` names (every member of that name, if it appears twice);
    /// nil when the path names nothing.
    func removing(_ path: ConfigKeyPath) -> JSONValue? {
        removing(path.components[...])
    }

    private func removing(_ path: ArraySlice<ConfigKeyPath.Component>) -> JSONValue? {
        guard let first = path.first else { return nil }
        let rest = path.dropFirst()
        switch (self, first) {
        case (.object(let members), .key(let name)):
            guard members.contains(where: { $0.key == name }) else { return nil }
            if rest.isEmpty { return .object(members.filter { $0.key != name }) }
            var changed = false
            let updated = members.map { member -> (key: String, value: JSONValue) in
                guard member.key == name, let value = member.value.removing(rest) else { return member }
                changed = true
                return (member.key, value)
            }
            return changed ? .object(updated) : nil
        case (.array(var items), .index(let index)):
            guard items.indices.contains(index) else { return nil }
            if rest.isEmpty {
                items.remove(at: index)
            } else {
                guard let value = items[index].removing(rest) else { return nil }
                items[index] = value
            }
            return .array(items)
        default:
            return nil
        }
    }
}

/// Suggestions for a misspelt key.
enum ConfigKeys {
    /// The key of `candidates` nearest to `name` (ignoring case), if it is near enough to be a
    /// slip: at most a third of its letters apart, and at least 1.
    static func nearest(to name: String, in candidates: [String]) -> String? {
        let target = Array(name.lowercased())
        let scored = candidates.map { ($0, distance(target, Array($0.lowercased()))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(1, target.count / 3) else { return nil }
        return best.0
    }

    /// Edits from `a` to `b`: insertions, deletions, substitutions and swaps of neighbours
    /// (optimal string alignment distance).
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var d = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }
}
