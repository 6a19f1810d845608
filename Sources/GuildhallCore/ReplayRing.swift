// The events a session sent and the client has not acknowledged, numbered by
// the session's event sequence, kept so that a resume can replay exactly what
// was missed (MISSION §1, §10 "gap-free resume"). Pure value; no I/O.
//
// Bounded by a count: past it the oldest go, and a resume from before them
// is no longer possible (the caller falls back to offline sync). The time
// bound is the caller's: a dropped session is kept only for the resume window.

public struct ReplayRing<Element> {
    private var slots: [Element?]
    private var head = 0
    public private(set) var count = 0
    /// Seq of the oldest event held (meaningful when `count > 0`).
    public private(set) var firstSeq: UInt64 = 1
    public let capacity: Int

    public init(capacity: Int) {
        self.capacity = capacity
        slots = []
    }

    /// Seq of the newest event held, or `firstSeq - 1` when empty.
    public var lastSeq: UInt64 { firstSeq + UInt64(count) - 1 }

    /// Adds the event with seq `lastSeq + 1`; returns the oldest event when it had to go.
    @discardableResult
    public mutating func append(_ e: Element) -> Element? {
        guard capacity > 0 else { firstSeq += 1; return nil }
        if count == capacity {
            let old = slots[head]
            slots[head] = e
            head = (head + 1) % slots.count
            firstSeq += 1
            return old
        }
        if count == slots.count { grow() }
        slots[(head + count) % slots.count] = e
        count += 1
        return nil
    }

    /// Doubles the storage (up to the capacity), oldest first at index 0.
    private mutating func grow() {
        let size = min(capacity, max(16, slots.count * 2))
        var bigger = [Element?](repeating: nil, count: size)
        for i in 0..<count { bigger[i] = slots[(head + i) % slots.count] }
        slots = bigger
        head = 0
    }

    /// Forgets events up to and including `seq`; calls `dropped` for each, oldest first.
    public mutating func acknowledge(upTo seq: UInt64, _ dropped: (Element) -> Void = { _ in }) {
        while count > 0 && firstSeq <= seq {
            if let e = slots[head] { dropped(e) }
            slots[head] = nil
            head = (head + 1) % slots.count
            count -= 1
            firstSeq += 1
        }
        if count == 0 && seq >= firstSeq { firstSeq = seq + 1 }
    }

    /// Whether every event after `seq` is still held, so a resume from `seq` replays without a gap.
    public func canReplay(after seq: UInt64) -> Bool {
        seq <= lastSeq && seq + 1 >= firstSeq
    }

    /// The events after `seq`, oldest first (check `canReplay` first).
    public func events(after seq: UInt64) -> [Element] {
        guard count > 0, seq < lastSeq else { return [] }
        let skip = Int(max(seq + 1, firstSeq) - firstSeq)
        return (skip..<count).compactMap { slots[(head + $0) % slots.count] }
    }

    public mutating func removeAll() {
        acknowledge(upTo: lastSeq)
    }
}
