import Foundation
import HappyCurl
import HappyServer
import Synchronization

/// Webhook batches POSTed through libcurl: one client (one connection kept
/// open) per webhook URL, so a slow receiver holds up only its own sender.
final class CurlWebhookPoster: WebhookPoster {
    private let clients = Mutex<[String: HTTPClient]>([:])
    private let trust = TLSTrust.fromEnvironment(ProcessInfo.processInfo.environment)

    func post(url: String, body: [UInt8], headers: [(name: String, value: String)], timeoutSeconds: Double)
        -> Result<Int, WebhookPostError> {
        do throws(HTTPClientError) {
            let client = try client(for: url)
            let request = HTTPClientRequest(method: "POST", url: url, headers: headers.map { HTTPHeader($0.name, $0.value) },
                                            body: body, timeout: timeoutSeconds,
                                            trust: trust,
                                            maxResponseBytes: 64 * 1024)
            return .success(try client.perform(request).status)
        } catch {
            return .failure(WebhookPostError(error.description))
        }
    }

    private func client(for url: String) throws(HTTPClientError) -> HTTPClient {
        if let client = clients.withLock({ $0[url] }) { return client }
        let client = try HTTPClient()
        clients.withLock { $0[url] = client }
        return client
    }
}
