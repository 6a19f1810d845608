// How long requests take, by kind, as a client sees it from its gateway:
// from the request frame read to its answer queued (the metric
// guildhall_request_duration_seconds, a histogram per kind). Each loop counts
// its own sessions' requests in plain arrays (no lock on the request path),
// hands a copy to the node at its liveness sweep, and a scrape adds the
// loops' copies up into Prometheus's text format. Figures are loop-thread
// only; Snapshot crosses threads.

import Foundation
import GuildhallCore
import GuildhallWire

struct RequestDurations {
    /// Bucket bounds in seconds, the same for every kind.
    static let bounds: [Double] = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5]

    struct Figures: Sendable {
        /// Observations per bucket (not cumulative); the last is above every bound.
        var buckets = [UInt64](repeating: 0, count: RequestDurations.bounds.count + 1)
        var sum = 0.0
        var count: UInt64 = 0

        mutating func add(_ other: Figures) {
            for i in buckets.indices { buckets[i] += other.buckets[i] }
            sum += other.sum
            count += other.count
        }
    }

    typealias Snapshot = [String: Figures]
    /// Each kind's figures, in the order first seen, and where each kind is.
    private var figures: [Figures] = []
    private var kinds: [String] = []
    private var place: [String: Int] = [:]
    /// The kind recorded last: a run of one kind (a publisher's sends) is
    /// counted without hashing its name each time.
    private var last = -1

    var byKind: Snapshot { Dictionary(uniqueKeysWithValues: zip(kinds, figures)) }

    mutating func record(_ kind: String, seconds: Double) {
        let bucket = Self.bounds.firstIndex { seconds <= $0 } ?? Self.bounds.count
        if last < 0 || kinds[last] != kind {
            if let i = place[kind] {
                last = i
            } else {
                last = kinds.count
                place[kind] = last
                kinds.append(kind)
                figures.append(Figures())
            }
        }
        figures[last].buckets[bucket] += 1
        figures[last].sum += seconds
        figures[last].count += 1
    }

    /// The loops' snapshots added up, as a histogram family in the text format.
    static func exposition(_ loops: [Snapshot]) -> String {
        var total: Snapshot = [:]
        for loop in loops { for (kind, f) in loop { total[kind, default: Figures()].add(f) } }
        var out = "# HELP guildhall_request_duration_seconds From a request's frame read to its answer queued, by request kind.\n"
        out += "# TYPE guildhall_request_duration_seconds histogram\n"
        for (kind, f) in total.sorted(by: { $0.key < $1.key }) {
            var cumulative: UInt64 = 0
            for (i, bound) in bounds.enumerated() {
                cumulative += f.buckets[i]
                out += "guildhall_request_duration_seconds_bucket{kind=\"\(kind)\",le=\"\(bound)\"} \(cumulative)\n"
            }
            out += "guildhall_request_duration_seconds_bucket{kind=\"\(kind)\",le=\"+Inf\"} \(f.count)\n"
            out += "guildhall_request_duration_seconds_sum{kind=\"\(kind)\"} \(f.sum)\n"
            out += "guildhall_request_duration_seconds_count{kind=\"\(kind)\"} \(f.count)\n"
        }
        return out
    }
}

extension GHRequest.OneOf_Body {
    /// The request kind as the metric labels it: the Proto field's name ("send_message").
    var kindLabel: String {
        MetricLabel.snake(Mirror(reflecting: self).children.first?.label ?? "unknown")
    }
}

/// A session's requests read and not answered yet: each one's kind and when
/// it was read, in the order read. Answers mostly come in that order, so
/// the oldest is looked at first and taken from the front. While the ids
/// rise in the order read (as clients number their requests) another answer
/// is looked for by binary search, and one past the newest (a request read
/// past the cap, untimed) is known at once; otherwise it is looked for in
/// order. Bounded: past `cap` requests waiting, more go untimed.
struct UnansweredRequests {
    private struct Started {
        let id: UInt64
        let kind: String
        let at: UInt64
    }

    /// Entries before `head` are answered (taken from the front without moving the rest).
    private var started: [Started] = []
    private var head = 0
    /// Whether the waiting ids rise in the order read.
    private var rising = true
    static let cap = 1024

    /// Request `id`, of `kind`, was read at `now` (`UnansweredRequests.now()`).
    mutating func read(_ id: UInt64, _ kind: String, at now: UInt64) {
        guard started.count - head < Self.cap else { return }
        if let last = started.last, id <= last.id { rising = false }  // (the list is emptied once all are answered)
        started.append(Started(id: id, kind: kind, at: now))
    }

    /// Gives back the list's storage when no request waits (a quiet session).
    mutating func giveBackRoom() {
        if head == started.count && started.capacity > 0 {
            started = []
            head = 0
            rising = true
        }
    }

    /// Request `id` is answered: its kind and how long it took, if it was timed.
    mutating func answered(_ id: UInt64) -> (kind: String, seconds: Double)? {
        guard head < started.count, let i = place(of: id) else { return nil }
        let s = started[i]
        if i == head { head += 1 } else { started.remove(at: i) }
        if head == started.count {
            started.removeAll(keepingCapacity: true)
            head = 0
            rising = true
        } else if head >= 64, head * 2 >= started.count {
            started.removeFirst(head)
            head = 0
        }
        return (s.kind, Double(Self.now() &- s.at) / 1e9)
    }

    /// Where request `id` waits (`head < started.count`).
    private func place(of id: UInt64) -> Int? {
        if started[head].id == id { return head }
        guard rising else { return started[head...].firstIndex { $0.id == id } }
        guard id > started[head].id, id <= started[started.count - 1].id else { return nil }
        var low = head + 1, high = started.count - 1
        while low <= high {
            let mid = (low + high) / 2
            if started[mid].id == id { return mid }
            if started[mid].id < id { low = mid + 1 } else { high = mid - 1 }
        }
        return nil
    }

    /// Whether an answer could be one of these (saves reading an encoded answer's id).
    var isEmpty: Bool { head == started.count }

    /// The monotonic clock in nanoseconds.
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
