import HappyCore
@testable import HappyServer
import XCTest

/// `/metrics` text: every counter and gauge with its value.
final class MetricsRendererTests: XCTestCase {
    func testCountersAndGaugesAreRenderedWithTheirValues() {
        let metrics = Metrics()
        metrics.connectionsOpened = 12
        metrics.connectionsClosed = 9
        metrics.countRefusal("maxClients")
        metrics.countRefusal("maxClients")
        metrics.countRefusal("origin")
        metrics.countIntent(action: "face.setHappiness", result: "applied")
        metrics.countError(.rateLimited)
        metrics.events = 41
        metrics.rateLimited = 5
        metrics.pingTimeouts = 2
        metrics.slowReaderCloses = 3
        metrics.readPauses = 4
        metrics.storeFailures = 6
        metrics.httpRequests["2xx"] = 8
        metrics.commitLatency.observe(0.0007)
        metrics.commitLatency.observe(0.3)
        let gauges = MetricsGauges(connections: 3, rooms: 4, occupiedRooms: 2, storeHealthy: false, frameStreams: 1,
                                   uptimeSeconds: 12.5,
                                   process: ProcessStats(residentBytes: 1_048_576, openFileDescriptors: 17))
        let text = MetricsRenderer.render(metrics, gauges)
        let lines = Set(text.split(separator: "\n").map(String.init))

        for expected in [
            "happy_connections 3",
            "happy_connections_opened_total 12",
            "happy_connections_closed_total 9",
            #"happy_connections_refused_total{reason="maxClients"} 2"#,
            #"happy_connections_refused_total{reason="origin"} 1"#,
            "happy_rooms 4",
            "happy_rooms_occupied 2",
            #"happy_intents_total{action="face.setHappiness",result="applied"} 1"#,
            #"happy_errors_total{code="rate_limited"} 1"#,
            "happy_events_total 41",
            "happy_rate_limited_total 5",
            "happy_ping_timeouts_total 2",
            "happy_slow_reader_closes_total 3",
            "happy_read_pauses_total 4",
            #"happy_http_responses_total{status="2xx"} 8"#,
            "happy_store_healthy 0",
            "happy_store_failures_total 6",
            #"happy_store_commit_seconds_bucket{le="0.0005"} 0"#,
            #"happy_store_commit_seconds_bucket{le="0.001"} 1"#,
            #"happy_store_commit_seconds_bucket{le="0.5"} 2"#,
            #"happy_store_commit_seconds_bucket{le="+Inf"} 2"#,
            "happy_store_commit_seconds_count 2",
            "happy_frame_streams 1",
            "happy_process_resident_memory_bytes 1048576",
            "happy_process_open_fds 17",
            "happy_uptime_seconds 12.5",
        ] {
            XCTAssertTrue(lines.contains(expected), "missing \(expected)")
        }
        XCTAssertTrue(lines.contains("# TYPE happy_connections gauge"))
        XCTAssertTrue(lines.contains("# TYPE happy_events_total counter"))
        XCTAssertTrue(lines.contains("# TYPE happy_store_commit_seconds histogram"))
    }

    func testServerGaugesComeFromTheComponents() {
        let test = TestServer()
        _ = test.joined(room: "one")
        let leaving = test.joined(room: "two")
        test.close(leaving)
        test.time.advance(by: 30)
        let gauges = test.server.status.gauges()

        XCTAssertEqual(gauges.connections, 1)
        XCTAssertEqual(gauges.rooms, 2)
        XCTAssertEqual(gauges.occupiedRooms, 1)
        XCTAssertTrue(gauges.storeHealthy)
        XCTAssertEqual(gauges.frameStreams, 0)
        XCTAssertEqual(gauges.uptimeSeconds, 30, accuracy: 0.001)
        XCTAssertEqual(test.metrics.connectionsOpened, 2)
        XCTAssertEqual(test.metrics.connectionsClosed, 1)
    }
}
