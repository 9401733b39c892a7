/// `CacheHint`: memory prefetch for the server's loops over thousands of
/// connections, whose objects are out of the cache by the time the loop
/// comes back to them (the kernel's send path runs between two of them).
public import CWebSockets

/// Cache hints for the write loops that visit thousands of objects in a row.
public enum CacheHint {
    /// Asks the CPU to bring the `bytes` at `object` into its caches ahead of
    /// use. A hint only: a wrong size costs a little bandwidth, never a fault.
    @inlinable @inline(__always)
    public static func prefetch(_ object: AnyObject, bytes: Int) {
        happy_prefetch_range(Unmanaged.passUnretained(object).toOpaque(), bytes)
    }
}
