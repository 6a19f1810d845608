// The events a session sent and the client has not acknowledged, numbered by
// the session's event sequence, kept so that a resume can replay exactly what
// was missed (docs/protocol.md). No I/O.
//
// Bounded by a count: past it the oldest go, and a resume from before them
// is no longer possible (the caller falls back to offline sync). The time
// bound is the caller's: a dropped session is kept only for the resume window.
//
// Why manual memory: one append per delivery per recipient sits on the
// fan-out path. An array of optionals loaded each old slot (to release it)
// and the array header, two cache misses per delivery across a thousand
// sessions' rings (measured: 15% of the fan-out profile). Here an append
// only initializes memory, sizes are powers of two (a mask, not a division),
// and the methods are inlinable so they specialize for the element. It is a
// noncopyable struct, not a class, so its fields live inside the session
// object next to the other per-delivery fields: as a separate object its
// header was one more cache miss per delivery (perf annotate, shape A: the
// load of `capacity` took a third of the append's samples).
//
// The storage also shrinks: a client that fell behind once (a burst, a stall)
// doubled its storage for good, and across 10 000 sessions sizes that only
// grow add up (R3's memory crept for an hour; the connections' write scratch,
// which also only grew, was the larger part). Every `reviewEvery` acknowledgements the storage is cut to
// the most held before any of them (a power of two, at least `leastStorage`) when that
// is a quarter of it or less, so a client acknowledging at a steady pace
// keeps its size and one back from a burst gives the memory back. Not cut
// at half: a client whose holding at acknowledgements wavers across a power
// of two (shape B at full rate) then shrank and grew again every few reviews,
// each time moving every event held (1% of the loop).
//
// The storage starts at `leastStorage`, 4 events: an idle session holds
// the one "sync completed" its login sent until it acknowledges it, and a
// first size of 16 (768 bytes of 48-byte entries) was a sixth of what an
// idle session cost (`bench connections`). A fan-out's rings reach
// thousands anyway; the two extra doublings on the way move a dozen events.

public struct ReplayRing<Element>: ~Copyable {
    @usableFromInline var slots: UnsafeMutablePointer<Element>
    @usableFromInline var size: Int
    @usableFromInline var head = 0
    @usableFromInline var held = 0
    @usableFromInline var first: UInt64 = 1
    /// Most events held at an acknowledgement since the last review of the size.
    @usableFromInline var heldAtAcknowledgements = 0
    /// Acknowledgements since the last review of the size.
    @usableFromInline var acknowledgements = 0
    /// Most events held.
    public let capacity: Int
    /// Acknowledgements between reviews of the storage's size.
    public static var reviewEvery: Int { 8 }
    /// The smallest storage: the first, and the least a review cuts to.
    public static var leastStorage: Int { 4 }

    @inlinable
    public init(capacity: Int) {
        self.capacity = max(0, capacity)
        size = 0
        slots = UnsafeMutablePointer<Element>.allocate(capacity: 1)
    }

    deinit {
        for i in 0..<held { (slots + ((head + i) & (size - 1))).deinitialize(count: 1) }
        slots.deallocate()
    }

    /// Events held.
    @inlinable public var count: Int { held }
    /// Events the storage has room for before it grows (a power of two, or 0 before the first).
    public var storage: Int { size }
    /// Seq of the oldest event held (meaningful when `count > 0`).
    @inlinable public var firstSeq: UInt64 { first }
    /// Seq of the newest event held, or `firstSeq - 1` when empty.
    @inlinable public var lastSeq: UInt64 { first &+ UInt64(held) &- 1 }

    /// Adds the event with seq `lastSeq + 1`; returns the oldest event when it had to go.
    @inlinable @discardableResult
    public mutating func append(_ e: consuming Element) -> Element? {
        guard capacity > 0 else { first += 1; return nil }
        var old: Element?
        if held == capacity {
            old = (slots + head).move()
            head = (head + 1) & (size - 1)
            held -= 1
            first += 1
        } else if held == size {
            grow()
        }
        (slots + ((head + held) & (size - 1))).initialize(to: e)
        held += 1
        return old
    }

    /// Doubles the storage.
    @usableFromInline
    mutating func grow() { resize(to: max(Self.leastStorage, size * 2)) }

    /// Moves the events to storage for `newSize` (a power of two, at least `held`), oldest first at index 0.
    @usableFromInline
    mutating func resize(to newSize: Int) {
        let moved = UnsafeMutablePointer<Element>.allocate(capacity: newSize)
        for i in 0..<held { (moved + i).moveInitialize(from: slots + ((head + i) & (size - 1)), count: 1) }
        slots.deallocate()
        slots = moved
        size = newSize
        head = 0
    }

    /// Cuts the storage to the most held at the acknowledgements since the last review, if that is a quarter of it or less.
    @usableFromInline
    mutating func reviewSize() {
        var needed = Self.leastStorage
        while needed < heldAtAcknowledgements { needed *= 2 }
        if size >= needed * 4 { resize(to: needed) }
        heldAtAcknowledgements = 0
        acknowledgements = 0
    }

    /// Takes out the oldest event (the buffer lets it go unacknowledged).
    @inlinable
    public mutating func dropOldest() -> Element? {
        guard held > 0 else { return nil }
        let old = (slots + head).move()
        head = (head + 1) & (size - 1)
        held -= 1
        first += 1
        return old
    }

    /// Forgets events up to and including `seq`; calls `dropped` for each, oldest first.
    @inlinable
    public mutating func acknowledge(upTo seq: UInt64, _ dropped: (Element) -> Void = { _ in }) {
        heldAtAcknowledgements = max(heldAtAcknowledgements, held)
        acknowledgements += 1
        defer { if acknowledgements >= Self.reviewEvery { reviewSize() } }
        while held > 0 && first <= seq {
            dropped((slots + head).move())
            head = (head + 1) & (size - 1)
            held -= 1
            first += 1
        }
        if held == 0 && seq >= first { first = seq + 1 }
        // Only when the two places do not overlap (nor wrap): the usual case, and the rest is rare.
        if head != 0 && held <= Self.movedToFront && head >= held && head + held <= size { moveToFront() }
    }

    /// Most events an acknowledgement moves back to the front of the storage.
    public static var movedToFront: Int { 16 }

    /// Moves the events held (a few) to the front of the storage, so that the
    /// next appends reuse the slots the last ones used. A client acknowledging
    /// every n events then cycles through about n slots, not through the
    /// whole storage (the next power of two, up to twice as many): across a
    /// thousand sessions that is half the memory written per delivery, and
    /// what fits in the cache (shape D: every append's store missed it).
    @usableFromInline
    mutating func moveToFront() {
        slots.moveInitialize(from: slots + head, count: held)
        head = 0
    }

    /// Whether every event after `seq` is still held, so a resume from `seq` replays without a gap.
    @inlinable
    public func canReplay(after seq: UInt64) -> Bool {
        seq <= lastSeq && seq + 1 >= first
    }

    /// The events after `seq`, oldest first (check `canReplay` first).
    @inlinable
    public func events(after seq: UInt64) -> [Element] {
        guard held > 0, seq < lastSeq else { return [] }
        let skip = Int(max(seq + 1, first) - first)
        return (skip..<held).map { (slots + ((head + $0) & (size - 1))).pointee }
    }
}
