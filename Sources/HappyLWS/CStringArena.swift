/// `CStringArena`: C strings that C structures point at for as long as
/// their owner lives. lws keeps the pointers it is given in its creation
/// and connect structures (names, mount points, origins), so a Swift
/// string's temporary C copy would dangle; these copies are freed together
/// when the arena goes.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owned `strdup` copies, freed when the arena is deinitialized.
public final class CStringArena {
    private var strings: [UnsafeMutablePointer<CChar>] = []

    public init() {}

    deinit {
        for string in strings { free(string) }
    }

    /// A C copy of `text`, alive as long as the arena.
    public func copy(_ text: String) -> UnsafeMutablePointer<CChar> {
        guard let copy = strdup(text) else { fatalError("out of memory copying a C string") }
        strings.append(copy)
        return copy
    }

    /// `copy(text)` as a read-only pointer, the form C structures take.
    public func constant(_ text: String) -> UnsafePointer<CChar> {
        UnsafePointer(copy(text))
    }
}
