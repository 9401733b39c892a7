import Foundation
#if canImport(UIKit) && !os(watchOS)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

/// A room following the app's lifecycle: suspended when the app leaves,
/// resumed when it comes back, until cancelled or dropped.
public final class AppLifecycleObservation: @unchecked Sendable {
    private let center: NotificationCenter
    private let lock = NSLock()
    private var tokens: [any NSObjectProtocol]

    init(center: NotificationCenter, tokens: [any NSObjectProtocol]) {
        self.center = center
        self.tokens = tokens
    }

    /// Stops following (the room stays as it is).
    public func cancel() {
        let taken = lock.withLock {
            defer { tokens = [] }
            return tokens
        }
        for token in taken { center.removeObserver(token) }
    }

    deinit { cancel() }
}

extension HappyRoom {
    /// Suspends the room when `suspendOn` is posted to `center` and resumes it
    /// (with every event of the pause) when `resumeOn` is. Keep the returned
    /// observation as long as the room should follow.
    public func follow(suspendOn: Notification.Name, resumeOn: Notification.Name,
                       center: NotificationCenter = .default) -> AppLifecycleObservation {
        let suspend = center.addObserver(forName: suspendOn, object: nil, queue: nil) { [weak self] _ in
            self?.suspend()
        }
        let resume = center.addObserver(forName: resumeOn, object: nil, queue: nil) { [weak self] _ in
            self?.resume()
        }
        return AppLifecycleObservation(center: center, tokens: [suspend, resume])
    }

    #if canImport(UIKit) && !os(watchOS)
    /// Disconnects when the app goes to the background and resumes when it
    /// comes back to the foreground (UIKit's application notifications).
    @MainActor
    public func followAppLifecycle() -> AppLifecycleObservation {
        follow(suspendOn: UIApplication.didEnterBackgroundNotification,
               resumeOn: UIApplication.willEnterForegroundNotification)
    }
    #elseif canImport(AppKit)
    /// Disconnects when the Mac goes to sleep and resumes when it wakes (a Mac
    /// app keeps running in the background; sleep is when its sockets die).
    @MainActor
    public func followAppLifecycle() -> AppLifecycleObservation {
        follow(suspendOn: NSWorkspace.willSleepNotification, resumeOn: NSWorkspace.didWakeNotification,
               center: NSWorkspace.shared.notificationCenter)
    }
    #endif
}
