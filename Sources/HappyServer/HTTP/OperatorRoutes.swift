import Foundation
import HappyCore

/// The operator API (PROTOCOL.md section 13): the rooms in memory, one
/// room's connections with their lag, kicking connections (close 4003),
/// and deleting a room (close 4004, its state and history gone; it starts
/// again at seq 0 with a new epoch). Every request shows a `Host` of this
/// server and, changing something, a JSON body (`OperatorRequestCheck`),
/// and the operator credential (`OperatorGate`). `POST /api/backup` is
/// `BackupService`'s.
final class OperatorRoutes {
    static let defaultLimit = 100
    static let maxLimit = 1000
    static let kickReason = "removed from the room by an operator"
    static let deleteReason = "the room was deleted by an operator"

    private let directory: RoomDirectory
    private let gate: OperatorGate
    private let headers: SecurityHeaders
    private let broadcaster: Broadcaster
    private let coordinator: CommitCoordinator
    private let store: any StoreAccess
    private let responder: HTTPResponder
    private let logger: Logger
    /// The inspector page's file, served at `/admin` under the operator API's access rules.
    private let inspectorPath: String

    init(directory: RoomDirectory, gate: OperatorGate, headers: SecurityHeaders, broadcaster: Broadcaster,
         coordinator: CommitCoordinator, store: any StoreAccess, responder: HTTPResponder, logger: Logger,
         webRoot: String) {
        self.directory = directory
        self.gate = gate
        self.headers = headers
        self.broadcaster = broadcaster
        self.coordinator = coordinator
        self.store = store
        self.responder = responder
        self.logger = logger
        inspectorPath = webRoot + "/admin.html"
    }

    func register(in router: inout HTTPRouter) {
        router.add(["GET"], .exact("/api/rooms"), parameters: ["limit", "after"]) { [self] in list($0) }
        router.add(["GET", "POST", "DELETE"], .below("/api/rooms/"), parameters: []) { [self] in room($0) }
        router.add(["GET"], .exact("/admin"), parameters: ["token"]) { [self] in inspector($0) }
    }

    /// `GET /admin`: the inspector page. It holds no data (everything it
    /// shows comes from the routes above, with the key the page takes from
    /// its address's fragment), so it needs no credential; it is never framed.
    private func inspector(_ request: HTTPRequest) {
        if let refusal = gate.requestRefusal(request) { return responder.respond(request.exchange, refusal) }
        guard request.query["token"] == nil else {
            return responder.respond(request.exchange, HTTPError(.invalidValue,
                "the inspector takes its key in the address's fragment, /admin#key=KEY, which browsers never send "
                + "(a query would leave it in logs and history)"))
        }
        guard let page = FileManager.default.contents(atPath: inspectorPath) else {
            return responder.respond(request.exchange, HTTPError(
                .notFound, "no inspector page: \(inspectorPath) is missing from webRoot"))
        }
        responder.respond(request.exchange, HTTPResponse(status: 200, contentType: "text/html; charset=utf-8",
                                                         body: Array(page), headers: headers.inspector))
    }

    // MARK: GET /api/rooms

    private func list(_ request: HTTPRequest) {
        guard gate.admits(request, room: nil) else { return }
        let limit: Int
        do throws(HTTPError) {
            limit = try QueryArgument.integer(request.query, "limit", in: 1...Self.maxLimit) ?? Self.defaultLimit
        } catch {
            return responder.respond(request.exchange, error)
        }
        let after = request.query["after"] ?? ""
        let names = directory.rooms.keys.filter { $0 > after }.sorted()
        let page = names.prefix(limit)
        var w = JSONWriter(capacity: 128 + 160 * page.count)
        w.beginObject()
        w.key("rooms")
        w.beginArray()
        for name in page {
            guard let runtime = directory[name] else { continue }
            w.beginObject()
            summary(of: runtime, into: &w)
            w.endObject()
        }
        w.endArray()
        w.key("next")
        if names.count > limit, let last = page.last { w.string(last) } else { w.literal("null") }
        w.endObject()
        responder.respond(request.exchange, status: 200, json: w.bytes)
    }

    private func summary(of runtime: RoomRuntime, into w: inout JSONWriter) {
        w.key("room"); w.string(runtime.name)
        w.key("epoch")
        if let epoch = runtime.room?.epoch { w.string(epoch) } else { w.literal("null") }
        w.key("seq"); w.uint(runtime.room?.committed.seq ?? 0)
        w.key("clients"); w.int(runtime.presenceCount)
        w.key("observers"); w.int(runtime.observers.count)
        w.key("delivery"); w.string(runtime.crowd.mode.rawValue)
        w.key("lastEventTime")
        if let time = runtime.room?.lastEventTime { w.int(Int(time)) } else { w.literal("null") }
    }

    // MARK: /api/rooms/R (GET), /api/rooms/R/kick (POST), /api/rooms/R (DELETE)

    private func room(_ request: HTTPRequest) {
        let parts = request.route.dropFirst("/api/rooms/".count).split(separator: "/", omittingEmptySubsequences: false)
        guard let first = parts.first, Names.isValidRoom(String(first)), parts.count <= 2 else {
            return responder.respond(request.exchange, .notFound(request.method, request.route))
        }
        let name = String(first)
        let action = parts.count == 2 ? String(parts[1]) : ""
        switch (request.method, action) {
        case ("GET", ""):
            guard gate.admits(request, room: name) else { return }
            details(request, name)
        case ("POST", "kick"):
            guard gate.admits(request, room: name) else { return }
            kick(request, name)
        case ("DELETE", ""):
            guard gate.admits(request, room: name) else { return }
            delete(request, name)
        case (_, ""), (_, "kick"):
            responder.respond(request.exchange, .methodNotAllowed(request.method, request.route))
        default:
            responder.respond(request.exchange, .notFound(request.method, request.route))
        }
    }

    private func details(_ request: HTTPRequest, _ name: String) {
        guard let runtime = directory[name] else {
            return responder.respond(request.exchange, HTTPError(.notFound, "no room \(name) in memory on this server"))
        }
        var w = JSONWriter(capacity: 256 + 220 * runtime.listenerCount)
        w.beginObject()
        summary(of: runtime, into: &w)
        w.key("connections")
        w.beginArray()
        runtime.forEachListener { connection in
            w.beginObject()
            w.key("id"); w.string(connection.participant.id)
            w.key("name"); w.string(connection.participant.name)
            w.key("role"); w.string(connection.role.rawValue)
            w.key("observer"); w.bool(connection.isObserver)
            w.key("address"); w.string(connection.peerAddress)
            w.key("connectedAt"); w.int(Int(connection.connectedAt))
            w.key("queuedBytes"); w.int(broadcaster.unreadBytes(of: connection) ?? runtime.log.byteLimit)
            w.key("resyncs"); w.int(connection.output.resyncs)
            w.key("rateLimited"); w.int(connection.intake.rateLimited)
            w.endObject()
        }
        w.endArray()
        w.endObject()
        responder.respond(request.exchange, status: 200, json: w.bytes)
    }

    /// `{ "id": "c7" }` or `{ "name": "alice" }`, optional `"reason"`: those connections close with 4003.
    private func kick(_ request: HTTPRequest, _ name: String) {
        guard let body = try? JSONParser.parse(request.body), body.isObject else {
            return responder.respond(request.exchange, HTTPError(
                .badJSON, "the body must be a JSON object: { \"id\": \"c7\" } or { \"name\": \"alice\" }"))
        }
        let id = body["id"]?.stringValue, who = body["name"]?.stringValue
        guard (id == nil) != (who == nil) else {
            return responder.respond(request.exchange, HTTPError(
                .invalidValue, "name one connection by \"id\" or everyone of a \"name\" (one of them, as a string)"))
        }
        let given = body["reason"]?.stringValue
        guard given.map({ $0.utf8.count <= 120 && !$0.unicodeScalars.contains(where: \.isControl) }) ?? true else {
            return responder.respond(request.exchange, HTTPError(
                .invalidValue, "reason must be at most 120 bytes of text without control characters"))
        }
        let reason = given.map { "\(Self.kickReason): \($0)" } ?? Self.kickReason
        var kicked = 0
        directory[name]?.forEachListener { connection in
            guard connection.output.closeRequest == nil,
                  connection.participant.id == id || connection.participant.name == who else { return }
            broadcaster.close(connection, code: .kicked, reason: reason)
            kicked += 1
        }
        if kicked > 0 {
            logger.info("kicked", ["room": name, "who": id ?? who ?? "", "connections": "\(kicked)", "reason": reason])
        }
        var w = JSONWriter(capacity: 32)
        w.beginObject()
        w.key("kicked"); w.int(kicked)
        w.endObject()
        responder.respond(request.exchange, status: 200, json: w.bytes)
    }

    /// Closes the room's connections with 4004, then forgets its state and
    /// history once nothing of it waits for the store.
    private func delete(_ request: HTTPRequest, _ name: String) {
        var closed = 0
        if let runtime = directory[name] {
            runtime.forEachListener { connection in
                broadcaster.close(connection, code: .roomDeleted, reason: Self.deleteReason)
                closed += 1
            }
        }
        deleteWhenSettled(request, name, closed: closed)
    }

    private func deleteWhenSettled(_ request: HTTPRequest, _ name: String, closed: Int) {
        if let runtime = directory[name], runtime.commits.pendingIntents > 0 || runtime.commits.creationPending {
            return coordinator.whenBatchFinishes { [self] in deleteWhenSettled(request, name, closed: closed) }
        }
        directory.forget(name)
        store.delete(name) { [self] result in
            switch result {
            case .failure(let error):
                responder.respond(request.exchange,
                                  .unavailable("room \(name) could not be deleted (\(error.message))"))
            case .success:
                logger.info("room deleted", ["room": name, "connections": "\(closed)"])
                var w = JSONWriter(capacity: 64)
                w.beginObject()
                w.key("room"); w.string(name)
                w.key("deleted"); w.bool(true)
                w.key("closed"); w.int(closed)
                w.endObject()
                responder.respond(request.exchange, status: 200, json: w.bytes)
            }
        }
    }
}
