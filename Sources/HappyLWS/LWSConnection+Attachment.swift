/// Per-connection user data: one retained Swift object in the wsi's opaque
/// user pointer. `attach` retains it, the callbacks borrow it without
/// reference counting, and `detach` takes it off and releases it once.
///
/// The type passed to the reading calls must be the attached object's class
/// or a superclass of it: the pointer carries no type. A program that
/// attaches several kinds of objects attaches them as one base class and
/// tells them apart by a stored property (a cast per callback costs too much).
public import CWebSockets

extension LWSConnection {
    /// Whether an object is attached.
    @inlinable
    public var hasAttachment: Bool {
        lws_get_opaque_user_data(wsi) != nil
    }

    /// Attaches `object`, retained until `detach`. The connection must have
    /// nothing attached.
    @inlinable
    public func attach<Object: AnyObject>(_ object: Object) {
        assert(lws_get_opaque_user_data(wsi) == nil, "the connection already holds an object")
        lws_set_opaque_user_data(wsi, Unmanaged.passRetained(object).toOpaque())
    }

    /// Runs `body` with the attached object, borrowed: no retain or release
    /// (the connection holds it for the whole call, unless `body` detaches it
    /// and lets it go). Nil when nothing is attached.
    @inlinable @inline(__always)
    public func withAttachment<Object: AnyObject, Result>(as type: Object.Type,
                                                          _ body: (Object) throws -> Result) rethrows -> Result? {
        guard let pointer = lws_get_opaque_user_data(wsi) else { return nil }
        return try Unmanaged<Object>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
    }

    /// The attached object, as a new strong reference, or nil.
    @inlinable
    public func attachment<Object: AnyObject>(as type: Object.Type) -> Object? {
        guard let pointer = lws_get_opaque_user_data(wsi) else { return nil }
        return Unmanaged<Object>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Takes the attached object off the connection and hands the
    /// connection's reference to the caller (dropped with the result, so
    /// `_ = detach(as:)` releases it). Nil, and nothing released, when
    /// nothing is attached: a second detach is harmless.
    @inlinable
    @discardableResult
    public func detach<Object: AnyObject>(as type: Object.Type) -> Object? {
        guard let pointer = lws_get_opaque_user_data(wsi) else { return nil }
        lws_set_opaque_user_data(wsi, nil)
        return Unmanaged<Object>.fromOpaque(pointer).takeRetainedValue()
    }
}
