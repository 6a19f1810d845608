// Memory footprints of in-memory structures, for `guildhall-lab bench dedup`:
// the process's resident bytes (/proc/self/statm) before and after filling
// a structure the way the server fills it.

import Foundation
import GuildhallCore

public enum Footprint {
    static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
              let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Resident bytes per committed send held by the de-duplication table
    /// (RecentSends) with `entries` sends in its window, UUID client ids.
    public static func recentSendsBytesPerEntry(entries: Int) -> Double {
        let before = residentBytes()
        var recent = RecentSends()
        let start = UIDGenerator.floor(atMillis: 1_800_000_000_000)
        for i in 0..<entries {
            recent.remember(sender: "user-\(i % 10_000)", clientID: "3f2a9c4e-5b6d-4e7f-8a9b-\(String(format: "%012d", i))",
                            uid: start + UInt64(i) << 10)
        }
        let after = residentBytes()
        withExtendedLifetime(recent) {}
        return Double(after - before) / Double(max(entries, 1))
    }
}
