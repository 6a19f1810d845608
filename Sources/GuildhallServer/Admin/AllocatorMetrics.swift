// The allocator's own figures, read when scraped: jemalloc (CJemalloc, the
// process's malloc; docs/performance.md "The allocator") says how many bytes
// the process has allocated and how many its arenas keep resident. The gap
// between those and process_resident_memory_bytes is memory jemalloc holds
// for reuse. Any thread (mallctl takes its own locks).

import CJemalloc
import Prometheus

struct AllocatorMetrics: Sendable {
    private let allocated, resident: Gauge

    init(_ registry: PrometheusCollectorRegistry) {
        allocated = registry.gauge(name: "guildhall_allocator_allocated_bytes", help: "Bytes the process has allocated (jemalloc's stats.allocated).")
        resident = registry.gauge(name: "guildhall_allocator_resident_bytes",
                                  help: "Bytes in pages the allocator keeps resident, allocated or held for reuse (jemalloc's stats.resident).")
    }

    /// Reads the figures now: the statistics are a snapshot jemalloc refreshes when its epoch advances.
    func update() {
        var epoch: UInt64 = 1
        _ = mallctl("epoch", nil, nil, &epoch, MemoryLayout<UInt64>.size)
        if let bytes = Self.read("stats.allocated") { allocated.set(to: Double(bytes)) }
        if let bytes = Self.read("stats.resident") { resident.set(to: Double(bytes)) }
    }

    private static func read(_ name: String) -> Int? {
        var value = 0, size = MemoryLayout<Int>.size
        return mallctl(name, &value, &size, nil, 0) == 0 ? value : nil
    }
}
