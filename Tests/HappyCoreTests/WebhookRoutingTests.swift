import HappyCore
import XCTest

/// Webhooks are named by a key derived from their URL, so their place in the list does not matter.
final class WebhookRoutingTests: XCTestCase {
    private func webhook(_ url: String, _ events: [WebhookEventType]) -> HappyConfig.Webhook {
        HappyConfig.Webhook(url: url, events: events, secret: "s")
    }

    func testAKeyIsTheURLsAndNeverAListPosition() {
        // Queued deliveries are stored under this value: it must not change between versions.
        XCTAssertEqual(WebhookKey.of(url: "https://hooks.example/in"), 8_194_243_303_491_794_080)
        let other = webhook("https://hooks.example/other", [.event])
        XCTAssertEqual(other.key, WebhookKey.of(url: other.url))
        XCTAssertNotEqual(other.key, WebhookKey.of(url: "https://hooks.example/in"))
        for url in ["http://a/", "https://hooks.example/in", "http://127.0.0.1:9/hook", ""] {
            XCTAssertGreaterThanOrEqual(WebhookKey.of(url: url), WebhookKey.smallest, "positive, and above any list position")
        }
    }

    func testRoutingNamesWebhooksByKeyWhateverTheirOrder() {
        let a = webhook("https://a.example/in", [.event, .presenceJoined])
        let b = webhook("https://b.example/in", [.event])
        let routing = WebhookRouting([a, b])
        XCTAssertEqual(routing.webhooks(for: .event), [a.key, b.key])
        XCTAssertEqual(routing.webhooks(for: .presenceJoined), [a.key])
        XCTAssertEqual(WebhookRouting([b, a]).webhooks(for: .presenceJoined), [a.key], "reordered: the same webhook")
        XCTAssertEqual(routing.deliveries(.event) { Array("{}".utf8) }.map(\.webhook), [a.key, b.key])
        XCTAssertEqual(routing.deliveries(.roomEmptied) { XCTFail("built for nobody"); return [] }, [])
    }
}
