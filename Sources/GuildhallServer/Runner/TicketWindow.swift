// What the runner waits on, by ticket (EffectRunner.swift). Tickets are
// handed out in increasing order and jobs settle in about that order, so the
// waiting ones lie in a window just behind the newest: a value is found by
// its ticket's offset from the oldest one still waiting, with no hashing (a
// dictionary's hash and probe per commit had been 3% of a busy home loop).
// A ticket never settled keeps the window open behind it, as it would keep
// its entry in a dictionary. Loop thread only.

struct TicketWindow<Value> {
    /// Slots from the ticket sequence `base` on; nil where settled or never used (a read's ticket).
    private var slots: [Value?] = []
    /// Leading slots already settled, cut off in bulk.
    private var head = 0
    private var base: UInt64 = 0
    private(set) var count = 0

    /// Keeps `value` under ticket sequence `seq`, newer than every one kept before.
    mutating func insert(_ value: Value, at seq: UInt64) {
        if count == 0 {
            // Empty: the window starts here (its settled slots go at once).
            slots.removeAll(keepingCapacity: true)
            head = 0
            base = seq
        }
        precondition(seq >= base + UInt64(slots.count), "tickets kept out of order")
        while base + UInt64(slots.count) < seq { slots.append(nil) }
        slots.append(value)
        count += 1
    }

    /// Takes what waits under `seq`, if anything does.
    mutating func remove(at seq: UInt64) -> Value? {
        guard seq >= base + UInt64(head), seq < base + UInt64(slots.count) else { return nil }
        let i = Int(seq - base)
        guard let value = slots[i].take() else { return nil }
        count -= 1
        while head < slots.count, slots[head] == nil { head += 1 }
        // Cut settled slots off once they are half the window (amortized: each slot moves at most once per cut).
        if head > 64, head * 2 > slots.count {
            slots.removeFirst(head)
            base += UInt64(head)
            head = 0
        }
        return value
    }
}
