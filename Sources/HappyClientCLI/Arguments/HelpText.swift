import HappyCore

/// The help texts: the tool's, and one per command.
public enum HelpText {
    static let shortUsage = "usage: happyclient [options] <command> [command options]"

    /// The tool's help (`happyclient --help`).
    public static let general = """
        \(shortUsage)

        A terminal client of a Happy server: read and change the shared scene of a
        room, stream its events, or play it full-screen.

        commands:
          state [--json] [--seq N]        the room's scene, presence and seq; with
                                          --seq, the room as it was after event N
          happiness VALUE                 set the face's happiness (0 to 100)
          nudge happiness DELTA           change happiness by DELTA (+5, -5)
          scale VALUE                     set the face's scale
          pinch FACTOR                    multiply the face's scale by FACTOR
          heart [RATE] [--fill COLOR] [--stroke COLOR] [--width WIDTH]
                                          the heart's fill rate (0 to 1) and style
          dragon forward|back|hide|show|toggle [--times N]
                                          press the dragon's buttons
          reset                           the room back to its defaults
          act ACTION [FIELD=VALUE ...]    any action of the protocol by its name
                                          (act --help lists them)
          watch [--json] [--pointers]     stream events and presence as they happen,
                                          and with --pointers the others' live pointers
          play [--plain] [--color MODE]   the scene live in the terminal, with keys
          ping [--count N]                round-trip latency and clock offset
          history [--since S] [--limit L] [--json]
                                          the room's recorded events, as watch prints them
          replay [--from S] [--speed X]   the room's past played in the terminal, then live
          frame [VIEW] --out FILE [--seq N]
                                          a PNG of the room drawn by the server, now
                                          or as it was after event N
          help [COMMAND]                  this text, or a command's

        operator commands (the operator key, or with auth.secret an admin token, as --token):
          rooms [--limit N] [--after ROOM] [--all] [--json]
                                          the rooms in the server's memory
          room ROOM [--json]              a room's connections: lag, resyncs, rate limits
          kick ROOM --id ID | --name NAME [--reason TEXT]
                                          remove connections from a room (close 4003)
          delete-room ROOM --yes          close a room's connections (4004) and erase
                                          its state and history

        state, watch and ping watch the room as observers: nobody sees them join.

        options (before or after the command):
        \(commonOptionLines)

        exit codes:
        \(ExitStatus.helpLines)

        Run 'happyclient COMMAND --help' for a command's options and examples.
        """

    static let commonOptionLines = """
          --url URL          the server, ws:// or wss:// (HAPPY_URL; default ws://127.0.0.1:8080)
          --room ROOM        the room (HAPPY_ROOM; default: the server's, usually lobby)
          --name NAME        your display name (HAPPY_NAME; default: your login name)
          --token TOKEN      access token, when the server requires one (HAPPY_TOKEN)
          --timeout SECONDS  how long to wait for the server (default 5)
          -h, --help         show help
          --version          show the version
        """

    /// The one-line form of a command, shown with its usage errors.
    public static func synopsis(of command: CommandName) -> String {
        "usage: happyclient [options] " + synopsisBody(command)
    }

    private static func synopsisBody(_ command: CommandName) -> String {
        switch command {
        case .state: return "state [--json] [--seq N]"
        case .happiness: return "happiness VALUE"
        case .nudge: return "nudge happiness DELTA"
        case .scale: return "scale VALUE"
        case .pinch: return "pinch FACTOR"
        case .heart: return "heart [RATE] [--fill COLOR] [--stroke COLOR] [--width WIDTH]"
        case .dragon: return "dragon forward|back|hide|show|toggle [--times N]"
        case .reset: return "reset"
        case .act: return "act ACTION [FIELD=VALUE ...]"
        case .watch: return "watch [--json] [--pointers]"
        case .play: return "play [--plain | --color truecolor|16|none] [--art FILE] [--fps N]"
        case .ping: return "ping [--count N]"
        case .history: return "history [--since S] [--limit L] [--json]"
        case .replay: return "replay [--from S] [--speed X] [--plain | --color truecolor|16|none] [--art FILE] [--fps N]"
        case .frame: return "frame [face|heart|dragon|scene] --out FILE [--seq N] [--width W] [--height H] [--phase P]"
        case .rooms: return "rooms [--limit N] [--after ROOM] [--all] [--json]"
        case .room: return "room ROOM [--json]"
        case .kick: return "kick ROOM --id ID | --name NAME [--reason TEXT]"
        case .deleteRoom: return "delete-room ROOM --yes"
        case .help: return "help [COMMAND]"
        }
    }

    /// A command's help (`happyclient heart --help`).
    public static func help(for command: CommandName?) -> String {
        guard let command, command != .help else { return general }
        return """
            \(synopsis(of: command))

            \(details(command))

            common options:
            \(commonOptionLines)

            exit codes:
            \(ExitStatus.helpLines)
            """
    }

    /// The actions `act` sends, from the action table: each with its fields, then what it does.
    static var actionLines: String {
        Action.Kind.allCases.map { kind -> String in
            let spec = kind.spec
            let fields = spec.parameters.map { parameter -> String in
                let field = "\(parameter.name)=\(placeholder(parameter))"
                return parameter.isRequired ? field : "[\(field)]"
            }.joined(separator: " ")
            let oneAtLeast = spec.needsOneParameter ? "\n      (at least one of the fields)" : ""
            return "  \(spec.wireName) \(fields)".trimmingTrailingSpaces + "\n      \(spec.summary)" + oneAtLeast
        }.joined(separator: "\n")
    }

    /// `INTEGER`, `-100..100` for a value with a range, `COLOR`.
    private static func placeholder(_ parameter: ParameterSpec) -> String {
        if let range = parameter.range { return "\(Describe.number(range.lowerBound))..\(Describe.number(range.upperBound))" }
        switch parameter.type {
        case .integer: return "INTEGER"
        case .number: return "NUMBER"
        case .positiveNumber: return "NUMBER>0"
        case .boolean: return "true|false"
        case .color: return "COLOR"
        }
    }

    private static func details(_ command: CommandName) -> String {
        switch command {
        case .state:
            return """
                Prints the room's scene, its seq and epoch, and who is there. It joins as
                an observer, so nobody sees it come and go.
                  --json    one JSON object: room, epoch, seq, state, presence, presenceCount
                  --seq N   the room as it was right after event N instead (and the
                            dragon's status label then), read from its history over
                            HTTP; with --json the server's answer: room, epoch, seq,
                            state, dragonStatus. N runs from the oldest event held
                            minus 1 to the room's seq; an older one is refused (gone)

                examples:
                  happyclient state
                  happyclient --room kitchen state --json
                  happyclient --room kitchen state --seq 12
                """
        case .happiness:
            return """
                Sets face.happiness. VALUE is an integer; the server clamps it to 0..100.
                Prints the ack's result and the new value, e.g. "applied  happiness 80".

                example:
                  happyclient happiness 80
                """
        case .nudge:
            return """
                The pan gesture: adds DELTA (an integer from -100 to 100) to happiness.

                examples:
                  happyclient nudge happiness +5
                  happyclient nudge happiness -5
                """
        case .scale:
            return """
                Sets face.scale. VALUE is a number greater than 0; the server clamps it
                to its range (0.1 to 2 by default).

                example:
                  happyclient scale 1.2
                """
        case .pinch:
            return """
                The pinch gesture: multiplies face.scale by FACTOR (greater than 0).

                example:
                  happyclient pinch 1.1
                """
        case .heart:
            return """
                Sets the heart's fill RATE (a number; the server clamps it to 0..1) and/or
                its style. With both, two intents are sent.
                  --fill COLOR     fill colour, #rgb or #rrggbb
                  --stroke COLOR   outline colour
                  --width WIDTH    outline width, 0 to 20 (0 means the default, 1)

                examples:
                  happyclient heart 0.7
                  happyclient heart --fill '#f00' --stroke '#000' --width 2
                """
        case .dragon:
            return """
                Presses a button of the dragon view: forward or back move it one step
                ("blocked" at the edge), hide/show/toggle the hide button.
                  --times N   press N times (1 to 1000), one line per answer

                examples:
                  happyclient dragon forward
                  happyclient dragon back --times 3
                  happyclient dragon toggle
                """
        case .reset:
            return """
                Puts the room back to the server's defaults (needs the admin role when
                the server requires tokens).

                example:
                  happyclient reset
                """
        case .act:
            let setRate = Action.Kind.setRate.spec.wireName, setStyle = Action.Kind.setStyle.spec.wireName
            return """
                Sends any action of the protocol (PROTOCOL.md section 4) by its name on
                the wire, its fields as FIELD=VALUE, checked as the server checks them.
                Prints the ack's result and the value it changed, as happiness, heart
                and the other commands that change the scene do.

                actions:
                \(actionLines)

                examples:
                  happyclient act \(setRate) value=0.5
                  happyclient act \(setStyle) fillColor='#0f0' lineWidth=3
                """
        case .watch:
            return """
                Streams the room: one line per event (time, #seq, sender, event name,
                what changed) and per join or leave. In a crowd room one line per tick
                ("#131–190 alice and 36 others: 41 forward, 19 back; +3 joined, 1 left
                (5234 here)"), per batch of joins and leaves, and per delivery switch.
                It watches as an observer: nobody sees it among the people. Connection
                changes go to stderr. When the connection drops it reconnects with
                backoff and resumes, so every event appears exactly once and in order;
                removed by an operator (4003) or with the room deleted (4004), it says so
                and exits 65. Stop with Ctrl-C (exit 130) or SIGTERM (exit 143).
                  --json       the server's event, tick and presence messages, one per line,
                               exactly as received (NDJSON)
                  --pointers   also where the others point and what they do: one line
                               per pointer that moves or goes (time, name, view, x and
                               y from 0 to 1, activity), starting with those already
                               shown; with --json, the server's pointers messages

                examples:
                  happyclient watch
                  happyclient --room kitchen watch --json | jq .seq
                  happyclient --room kitchen watch --pointers
                """
        case .play:
            return """
                Full-screen and live: the face, heart and dragon drawn in the terminal
                (24-bit colour half blocks when COLORTERM is truecolor or 24bit, else the
                16 ANSI colours), the dragon's status label, who is here, the connection.
                keys: ←/→ dragon back/forward, ↑/↓ happiness, +/- scale, [ ] heart rate,
                      h hide/show the dragon, q quit (exit 0)
                Others' live pointers show as their initial over the view they point
                at, and a line names who is steering what ("steering: alice (face,
                drag)"). Your keys show your pointer to them over the view you change,
                for a second after the last key.
                In a crowd room the people line shows how many are here, the dragon's
                presses in the last second and the most recent senders.
                Follows the terminal's size; reconnects and resumes when the connection
                drops. Ctrl-C and SIGTERM also restore the terminal (exit 130 and 143).
                  --plain          plain ASCII shading, no colour (same as --color none)
                  --color MODE     truecolor, 16 or none
                  --art FILE       scene art file (default: /assets/scene-art.json from the server)
                  --fps N          frames per second of the heart wave (1 to 30, default 10)

                example:
                  happyclient --room kitchen --name alice play
                """
        case .ping:
            return """
                Sends N application-level pings (default 5) and prints the round-trip
                times (min/avg/max) and the estimated offset of the server's clock.
                  --count N   number of pings, 1 to 100

                example:
                  happyclient ping --count 10
                """
        case .history:
            return """
                Prints the room's recorded events, oldest first, one line each as watch
                prints them (time, #seq, sender, event name, what changed), and ends.
                Reads /api/history a page of up to 1000 events at a time.
                  --since S   the events after seq S (default: from the oldest held);
                              when S is older, says where the history starts
                  --limit L   at most L events (default 100)
                  --json      each event exactly as the server broadcast it, one per
                              line (NDJSON)

                examples:
                  happyclient --room kitchen history
                  happyclient --room kitchen history --since 40 --limit 5000
                  happyclient --room kitchen history --json | jq -c '[.seq, .name]'
                """
        case .replay:
            return """
                The play view of the room's past: from the room as it was after event S,
                each recorded event in turn, X times as fast as it happened (pauses
                longer than a second last a second), up to the room's seq when the
                replay started; then the room live, as play shows it (the line under
                the picture says how many events happened meanwhile). The title shows
                "replay seq N of M at X×". During the replay any key but q goes live at
                once (and sends nothing), q quits; live, the keys are those of play.
                  --from S     start after event S (default: just before the oldest
                               event held)
                  --speed X    1 is as it happened, 4 four times faster (default 1,
                               up to 1000)
                  --plain, --color MODE, --art FILE, --fps N   as for play

                examples:
                  happyclient --room kitchen replay
                  happyclient --room kitchen replay --from 120 --speed 16
                """
        case .frame:
            return """
                Saves the PNG the server draws of the room (/frame/VIEW.png): the scene
                (default) or the face, heart or dragon view; now, or as the room was
                right after event N. Prints the file, the size and the byte count.
                  --out FILE   where to write the PNG (- for standard output)
                  --seq N      the room right after event N (the dragon's status label
                               included)
                  --width W, --height H   the size in pixels, 16 to 2048 (one of them
                               keeps the view's aspect; default: the view's own size)
                  --phase P    the heart wave's step, 0 to 99 (default: the wave now;
                               0 for a past frame, which never changes)

                examples:
                  happyclient --room kitchen frame --out now.png
                  happyclient --room kitchen frame dragon --seq 12 --out dragon-12.png
                """
        case .rooms:
            return """
                Lists the rooms in the server's memory, by name: people and observers
                connected, seq, delivery (each event, or ticks in a crowd room) and how
                long ago the last event was. Reads the operator API (GET /api/rooms),
                which needs a credential as --token (or HAPPY_TOKEN): the server's
                operator key (the file operator.key in its dataDir) or, when the
                server has auth.secret, an admin token.
                  --limit N      rooms per page, 1 to 1000 (default 100)
                  --after ROOM   the page after this room name
                  --all          every page, not only the first
                  --json         each room exactly as the server sent it, one per line

                examples:
                  happyclient rooms --token "$(cat data/operator.key)"
                  happyclient --url ws://happy.example.org rooms --all --token "$ADMIN_TOKEN"
                """
        case .room:
            return """
                Shows one room and every connection to it: id, name, person or observer,
                role, address, how long connected, the bytes queued for it (how far it
                lags), the resyncs it got and the intents the rate limit refused. ROOM
                defaults to --room. Access as for rooms.
                  --json   the server's answer as it came (GET /api/rooms/ROOM)

                examples:
                  happyclient room kitchen
                  happyclient room kitchen --json | jq '.connections[] | [.name, .queuedBytes]'
                """
        case .kick:
            return """
                Removes connections from ROOM: the server closes them with 4003 and the
                reason, and clients do not reconnect by themselves (they may join again).
                Prints how many were removed. Access as for rooms.
                  --id ID         one connection (happyclient room ROOM lists the ids)
                  --name NAME     every connection of that display name
                  --reason TEXT   said to whoever is removed (at most 120 bytes)
                The common --name (your own display name) goes before the command.

                examples:
                  happyclient kick kitchen --id c7
                  happyclient kick kitchen --name spammer --reason "flooding the room"
                """
        case .deleteRoom:
            return """
                Deletes ROOM: closes every connection of it with 4004, erases its state
                and history, and the room starts again at seq 0 with a new epoch. It
                cannot be undone, so it needs --yes. Access as for rooms.
                  --yes   do it

                example:
                  happyclient delete-room kitchen --yes
                """
        case .help:
            return "Shows the tool's help, or a command's."
        }
    }
}

private extension String {
    var trimmingTrailingSpaces: String {
        var text = self
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }
}
