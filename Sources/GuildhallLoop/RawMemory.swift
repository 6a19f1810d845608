// Byte buffers taken from malloc itself, for the buffers made per message or
// per write (a shared event's bytes, a connection's scratch, a write request).
// Swift's own raw allocation (`UnsafeMutableRawPointer.allocate`, at any
// alignment malloc already gives) goes through posix_memalign, whose
// splitting of chunks was a tenth of a loop's time at the maximum rate
// (docs/performance.md). Memory taken here goes back through `release`.

#if canImport(Glibc)
import Glibc
#endif

enum RawMemory {
    @inline(__always)
    static func take(_ count: Int) -> UnsafeMutableRawPointer {
        guard let p = malloc(max(count, 1)) else { fatalError("out of memory taking \(count) bytes") }
        return p
    }

    @inline(__always)
    static func take<T>(one: T.Type) -> UnsafeMutablePointer<T> {
        take(MemoryLayout<T>.stride).bindMemory(to: T.self, capacity: 1)
    }

    @inline(__always)
    static func release(_ p: UnsafeMutableRawPointer?) { free(p) }

    /// `p` (nil: nothing yet) with room for `count` bytes, its contents kept: the allocator
    /// may grow it where it is (large blocks), where taking anew always copied.
    @inline(__always)
    static func resize(_ p: UnsafeMutableRawPointer?, to count: Int) -> UnsafeMutableRawPointer {
        guard let grown = realloc(p, max(count, 1)) else { fatalError("out of memory taking \(count) bytes") }
        return grown
    }

    @inline(__always)
    static func release<T>(_ p: UnsafeMutablePointer<T>?) { free(p) }
}
