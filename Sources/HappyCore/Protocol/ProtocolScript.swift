/// The files written from the action table (`ActionTable.swift`) by `make protocol-js`
/// (the `happyprotocol` program): web/js/protocol.js, the table for the page and
/// /js/happy-client.js, and the table's part of Fuzz/protocol.dict. HappyCoreTests compare
/// both with the files checked in.
public enum ProtocolScript {
    /// The text of web/js/protocol.js.
    public static func render() -> String {
        var out = """
            // The protocol's actions and events (docs/PROTOCOL.md sections 3 and 4), for the page and
            // /js/happy-client.js. Written from HappyCore's action table (Sources/HappyCore/Scene/ActionTable.swift)
            // by `make protocol-js`: change the table, not this file (a Swift test compares the two).

            /**
             * The actions a client may send, under the names of HappyCore's `Action.Kind`: `name` on the
             * wire, what it does (`summary`), its `parameters` (top-level fields of the intent: `type`
             * integer, number, positiveNumber, boolean or color; `required`; `min` and `max` when the value
             * must be within them, refused outside), whether it needs at least one of them
             * (`needsOneParameter`), the `event` it causes and whether it needs the `admin` role.
             */
            export const ACTIONS = deepFreeze({

            """
        for kind in Action.Kind.allCases {
            let spec = kind.spec
            out += "  \(kind): {\n"
            out += "    name: \(quoted(spec.wireName)),\n"
            out += "    summary: \(quoted(spec.summary)),\n"
            if spec.parameters.isEmpty {
                out += "    parameters: [],\n"
            } else {
                out += "    parameters: [\n"
                for parameter in spec.parameters {
                    var fields = ["name: \(quoted(parameter.name))", "type: \(quoted(parameter.type.rawValue))",
                                  "required: \(parameter.isRequired)"]
                    if let range = parameter.range {
                        fields += ["min: \(number(range.lowerBound))", "max: \(number(range.upperBound))"]
                    }
                    out += "      { \(fields.joined(separator: ", ")) },\n"
                }
                out += "    ],\n"
            }
            out += "    needsOneParameter: \(spec.needsOneParameter),\n"
            out += "    event: \(quoted(spec.event.rawValue)),\n"
            out += "    admin: \(spec.requiresAdmin),\n"
            out += "  },\n"
        }
        out += """
            });

            /**
             * The events the server broadcasts, under the names of HappyCore's `EventName`: `name` on the
             * wire, the `word` a tick's counts use, the `summary` an event line gives (`value`: each changed
             * value in words, an answer naming the one at `path`; `heartStyle`, `dragonPosition`,
             * `dragonVisibility`, `roomReset`) and what the dragon's status `label` says after it
             * (`position`: the word and where the dragon is, `visibility`, `initial`; null: unchanged).
             */
            export const EVENTS = deepFreeze({

            """
        for name in EventName.allCases {
            let spec = name.spec
            var path = "null"
            if case .value(let scenePath) = spec.summary { path = quoted(scenePath.rawValue) }
            out += "  \(name): {\n"
            out += "    name: \(quoted(name.rawValue)),\n"
            out += "    word: \(quoted(spec.word)),\n"
            out += "    summary: \(quoted(spec.summary.name)),\n"
            out += "    path: \(path),\n"
            out += "    label: \(spec.dragonLabel.map { quoted($0.rawValue) } ?? "null"),\n"
            out += "  },\n"
        }
        out += """
            });

            /** The words event lines use for the scene's values, by path; a path not here is named as it is. */
            export const PATH_WORDS = deepFreeze({

            """
        for path in ScenePath.allCases {
            guard let word = path.word else { continue }
            out += "  \(quoted(path.rawValue)): \(quoted(word)),\n"
        }
        out += """
            });

            /** The actions by their name on the wire. */
            export const ACTIONS_BY_NAME = byName(ACTIONS);

            /** The events by their name on the wire. */
            export const EVENTS_BY_NAME = byName(EVENTS);

            function byName(table) {
              return Object.freeze(Object.fromEntries(Object.values(table).map((entry) => [entry.name, entry])));
            }

            function deepFreeze(value) {
              if (value && typeof value === 'object') {
                for (const inner of Object.values(value)) deepFreeze(inner);
                Object.freeze(value);
              }
              return value;
            }

            """
        return out
    }

    /// The first and last lines of the table's part of Fuzz/protocol.dict.
    public static let fuzzDictionaryMarkers = (
        begin: "# The actions and their parameters, from the action table (make protocol-js writes them):",
        end: "# (end of the action table's part)")

    /// The table's part of Fuzz/protocol.dict, markers included: each action's name, then
    /// each parameter name once, as libFuzzer's dictionary entries.
    public static func fuzzDictionaryPart() -> [String] {
        var names: [String] = []
        for kind in Action.Kind.allCases {
            for parameter in kind.spec.parameters where !names.contains(parameter.name) {
                names.append(parameter.name)
            }
        }
        let entries = (Action.wireNames + names).map(quoted)
        return [fuzzDictionaryMarkers.begin] + entries + [fuzzDictionaryMarkers.end]
    }

    /// Fuzz/protocol.dict's text with the table's part between its markers made the table's
    /// now; nil when the text lacks the markers.
    public static func fuzzDictionary(updating text: String) -> String? {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let begin = lines.firstIndex(of: fuzzDictionaryMarkers.begin),
              let end = lines[begin...].firstIndex(of: fuzzDictionaryMarkers.end) else { return nil }
        lines.replaceSubrange(begin...end, with: fuzzDictionaryPart())
        return lines.joined(separator: "\n")
    }

    /// A JSON string, which JavaScript reads alike.
    private static func quoted(_ text: String) -> String {
        var writer = JSONWriter(capacity: text.utf8.count + 2)
        writer.string(text)
        return writer.text
    }

    private static func number(_ value: Double) -> String {
        var writer = JSONWriter(capacity: 24)
        writer.number(value)
        return writer.text
    }
}
