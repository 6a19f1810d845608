// Threads that carry their name where an operator looks: `top -H`, `ps -L`,
// perf, /proc/PID/task/*/comm. Foundation's `Thread.name` never reaches the
// kernel on Linux, so every thread kept the name of the one that started it
// (a dispatch worker's "oot.default-qos"), and a busy writer could not be
// told from a busy loop. Touches nothing but the new thread's name.

import Foundation

public enum NamedThread {
    /// The most the kernel keeps of a thread's name; longer names are cut.
    public static let longestName = 15

    /// Starts `body` on a new thread that first names itself `name`.
    public static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            nameCurrent(name)
            body()
        }
        thread.start()
    }

    /// Names the calling thread (cut to `longestName` bytes). Through
    /// /proc, where Linux lets a thread rename itself: Swift does not see
    /// `pthread_setname_np` (a GNU extension) nor the variadic `prctl`.
    public static func nameCurrent(_ name: String) {
        #if os(Linux)
        let bytes = Array(name.utf8.prefix(longestName))
        let fd = open("/proc/thread-self/comm", O_WRONLY)
        guard fd >= 0 else { return }
        _ = write(fd, bytes, bytes.count)
        close(fd)
        #endif
    }
}
