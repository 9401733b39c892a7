import Foundation
import HappyCore

/// The gauges `/metrics` reads from the components that own them.
struct MetricsGauges {
    var connections = 0
    var rooms = 0
    var occupiedRooms = 0
    var storeHealthy = true
    var frameStreams = 0
    var tickingRooms = 0
    var webhooksDelivered = 0
    var webhookBatches = 0
    var webhookFailedAttempts = 0
    var webhooksDropped = 0
    /// The share of the last second the service thread worked rather than waited.
    var serviceBusyRatio = 0.0
    var uptimeSeconds = 0.0
    var process = ProcessStats()
}

/// `/metrics` in the Prometheus text format.
enum MetricsRenderer {
    static func render(_ metrics: Metrics, _ gauges: MetricsGauges) -> String {
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples {
                out += sample.labels.isEmpty ? "\(name) \(sample.value)\n" : "\(name){\(sample.labels)} \(sample.value)\n"
            }
        }
        func single(_ name: String, _ type: String, _ help: String, _ value: Int) {
            metric(name, type, help, [("", "\(value)")])
        }
        func histogram(_ name: String, _ help: String, _ histogram: Histogram) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
            for (bound, count) in zip(histogram.bounds, histogram.cumulative) {
                out += "\(name)_bucket{le=\"\(bound)\"} \(count)\n"
            }
            out += "\(name)_bucket{le=\"+Inf\"} \(histogram.count)\n"
            out += "\(name)_sum \(histogram.sum)\n\(name)_count \(histogram.count)\n"
        }

        single("happy_connections", "gauge", "Open WebSocket connections.", gauges.connections)
        single("happy_connections_opened_total", "counter", "WebSocket connections opened.", metrics.connectionsOpened)
        single("happy_connections_closed_total", "counter", "WebSocket connections closed.", metrics.connectionsClosed)
        metric("happy_connections_refused_total", "counter", "Connections refused, by reason.",
               metrics.connectionsRefused.sorted { $0.key < $1.key }.map { ("reason=\"\($0.key)\"", "\($0.value)") })
        single("happy_rooms", "gauge", "Rooms in memory.", gauges.rooms)
        single("happy_rooms_occupied", "gauge", "Rooms with connected clients.", gauges.occupiedRooms)
        single("happy_rooms_trimmed_total", "counter", "Idle rooms dropped early: too many rooms without clients in memory.",
               metrics.roomsTrimmed)
        metric("happy_intents_total", "counter", "Intents applied, by action and result.",
               metrics.intents.sorted { $0.key < $1.key }.map { entry in
                   let parts = entry.key.split(separator: "|")
                   return ("action=\"\(parts[0])\",result=\"\(parts[1])\"", "\(entry.value)")
               })
        metric("happy_errors_total", "counter", "Error answers, by code.",
               metrics.intentErrors.sorted { $0.key < $1.key }.map { ("code=\"\($0.key)\"", "\($0.value)") })
        single("happy_events_total", "counter", "Events broadcast.", metrics.events)
        single("happy_messages_out_total", "counter", "WebSocket messages written.", metrics.messagesOut)
        single("happy_bytes_out_total", "counter", "WebSocket bytes written.", metrics.bytesOut)
        single("happy_writes_out_total", "counter", "Socket writes carrying WebSocket messages (several per write when a client has several waiting).",
               metrics.writesOut)
        single("happy_outbox_drops_total", "counter", "Broadcasts given up for clients too far behind (replaced by a resync).", metrics.outboxDrops)
        single("happy_resyncs_total", "counter", "Resyncs written to clients that fell behind or whose room jumped ahead.", metrics.resyncs)
        single("happy_rate_limited_total", "counter", "Messages refused by the rate limit.", metrics.rateLimited)
        single("happy_flood_closes_total", "counter", "Connections closed for flooding.", metrics.floodCloses)
        single("happy_slow_reader_closes_total", "counter", "Connections dropped for not reading.", metrics.slowReaderCloses)
        single("happy_read_pauses_total", "counter", "Times reading a client paused until its unread replies drained.",
               metrics.readPauses)
        single("happy_ping_timeouts_total", "counter", "Connections dropped for not answering pings.", metrics.pingTimeouts)
        metric("happy_http_responses_total", "counter", "HTTP API responses, by status class.",
               metrics.httpRequests.sorted { $0.key < $1.key }.map { ("status=\"\($0.key)\"", "\($0.value)") })
        single("happy_store_healthy", "gauge", "1 when the last store write succeeded.", gauges.storeHealthy ? 1 : 0)
        single("happy_store_failures_total", "counter", "Failed store writes.", metrics.storeFailures)
        single("happy_store_conflicts_total", "counter", "Commits refused because another node recorded first.",
               metrics.commitConflicts)
        histogram("happy_store_commit_seconds", "Time to record one group commit.", metrics.commitLatency)
        single("happy_backups_total", "counter", "Backups of the database written.", metrics.backups)
        single("happy_backup_failures_total", "counter", "Backups that failed.", metrics.backupFailures)
        single("happy_backup_last_success_timestamp_seconds", "gauge",
               "Unix time of the last backup written since start (0: none).", metrics.lastBackupTime)
        single("happy_renders_total", "counter", "Frames rendered.", metrics.renders)
        single("happy_render_cache_hits_total", "counter", "Frame requests served from the cache.", metrics.renderCacheHits)
        single("happy_render_coalesced_total", "counter", "Frame requests that shared a render already running.",
               metrics.renderCoalesced)
        single("happy_render_refusals_total", "counter", "Frame requests refused while the renderer was busy.",
               metrics.renderRefusals)
        histogram("happy_render_seconds", "Time to render and encode one frame.", metrics.renderLatency)
        single("happy_frame_streams", "gauge", "Open frame streams.", gauges.frameStreams)
        single("happy_frame_streams_opened_total", "counter", "Frame streams opened.", metrics.streamsOpened)
        single("happy_stream_frames_sent_total", "counter", "Frames sent on streams.", metrics.streamFramesSent)
        single("happy_stream_frames_replaced_total", "counter",
               "Stream frames replaced by a newer one before a slow client took them.", metrics.streamFramesReplaced)
        single("happy_pointer_messages_total", "counter", "Pointer messages received.", metrics.pointersIn)
        single("happy_pointer_drops_total", "counter", "Pointer messages dropped over a client's pointersPerSecond.",
               metrics.pointersDropped)
        single("happy_pointer_batches_total", "counter", "Pointer batches sent (one per room per interval at most).",
               metrics.pointerBatches)
        single("happy_pointer_messages_out_total", "counter", "pointers messages written to clients.",
               metrics.pointerMessagesOut)
        single("happy_pointer_bytes_out_total", "counter", "Bytes of pointers messages written to clients.",
               metrics.pointerBytesOut)
        single("happy_pointer_skips_total", "counter", "pointers messages skipped for clients with a long queue.",
               metrics.pointerSkips)
        single("happy_ticks_total", "counter", "Ticks sent (one per crowd room per tick, shared by its clients).",
               metrics.ticks)
        single("happy_ticks_merged_total", "counter", "Ticks merged into one for a client that had written none of them.",
               metrics.ticksMerged)
        single("happy_presence_batches_total", "counter", "Presence batches sent in crowd rooms delivering each event.",
               metrics.presenceBatches)
        single("happy_delivery_switches_total", "counter", "Rooms switched between each and tick delivery.",
               metrics.deliverySwitches)
        single("happy_rooms_ticking", "gauge", "Rooms delivering ticks.", gauges.tickingRooms)
        single("happy_votes_total", "counter", "Dragon votes counted.", metrics.votes)
        single("happy_vote_rounds_total", "counter", "Rounds of dragon votes decided.", metrics.voteRounds)
        single("happy_webhook_deliveries_total", "counter", "Webhook deliveries their receivers accepted.",
               gauges.webhooksDelivered)
        single("happy_webhook_batches_total", "counter", "Webhook batches their receivers accepted.", gauges.webhookBatches)
        single("happy_webhook_failed_attempts_total", "counter", "Webhook batches that got no 2xx answer (retried).",
               gauges.webhookFailedAttempts)
        single("happy_webhook_dropped_total", "counter", "Webhook deliveries dropped past webhookQueueMax.",
               gauges.webhooksDropped)
        metric("happy_service_busy_ratio", "gauge",
               "Share of the last second the service thread spent working rather than waiting for events.",
               [("", String(format: "%.3f", gauges.serviceBusyRatio))])
        let process = gauges.process
        single("happy_process_resident_memory_bytes", "gauge", "Resident set size.", process.residentBytes)
        single("happy_process_open_fds", "gauge", "Open file descriptors.", process.openFileDescriptors)
        metric("happy_uptime_seconds", "gauge", "Seconds since start.",
               [("", String(format: "%.1f", gauges.uptimeSeconds))])
        return out
    }
}

/// Figures about this process from /proc.
struct ProcessStats {
    var residentBytes = 0
    var openFileDescriptors = 0

    static func read() -> ProcessStats {
        var stats = ProcessStats()
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) {
            let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            stats.residentBytes = kilobytes * 1024
        }
        stats.openFileDescriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        return stats
    }
}
