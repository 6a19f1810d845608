// The process's own metrics under Prometheus's standard names
// (process_resident_memory_bytes, process_cpu_seconds_total, …), the ones
// every exporter uses so that stock dashboards and alerts find them, and
// guildhall_build_info. Read from /proc when scraped. Any thread.

import Foundation
import GuildhallBuild
import Prometheus
import Synchronization

final class ProcessMetrics: Sendable {
    private let resident, virtual, openFDs, maxFDs: Gauge
    private let cpu: Counter
    /// The CPU seconds already added to `cpu` (a counter only grows by increments).
    private let cpuReported = Mutex(0.0)

    init(_ registry: PrometheusCollectorRegistry) {
        resident = registry.gauge(name: "process_resident_memory_bytes", help: "Resident memory size in bytes.")
        virtual = registry.gauge(name: "process_virtual_memory_bytes", help: "Virtual memory size in bytes.")
        openFDs = registry.gauge(name: "process_open_fds", help: "Number of open file descriptors.")
        maxFDs = registry.gauge(name: "process_max_fds", help: "Maximum number of open file descriptors.")
        cpu = registry.counter(name: "process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.")
        registry.gauge(name: "process_start_time_seconds", help: "Start time of the process since unix epoch in seconds.")
            .set(to: Self.startTime() ?? Date().timeIntervalSince1970)
        registry.gauge(name: "guildhall_build_info", labels: [("version", BuildInfo.version), ("commit", BuildInfo.commit)],
                       help: "The version and commit this binary was built from; always 1.").set(to: 1)
    }

    /// Reads the figures now.
    func update() {
        let stat = Self.stat()
        if let stat, stat.count > 22 {
            virtual.set(to: Double(stat[22]) ?? 0)
            resident.set(to: (Double(stat[23]) ?? 0) * Double(sysconf(Int32(_SC_PAGESIZE))))
            let seconds = ((Double(stat[13]) ?? 0) + (Double(stat[14]) ?? 0)) / Double(sysconf(Int32(_SC_CLK_TCK)))
            let delta = cpuReported.withLock { reported in
                defer { reported = max(reported, seconds) }
                return seconds - reported
            }
            if delta > 0 { cpu.increment(by: delta) }
        }
        openFDs.set(to: Double((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0))
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { maxFDs.set(to: Double(limit.rlim_cur)) }
    }

    /// /proc/self/stat's fields, numbered from 0 (pid), with the command name (which may hold spaces) as one.
    private static func stat() -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        return ["pid", "comm"] + text[text.index(after: close)...].split(separator: " ")
    }

    /// The process's start: its start in clock ticks after boot (stat field 21) plus the boot time.
    private static func startTime() -> Double? {
        guard let stat = stat(), stat.count > 21, let ticks = Double(stat[21]),
              let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
              let boot = Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces)) else { return nil }
        return boot + ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
