// Session keys to values, for the look-ups a fan-out makes once per
// recipient. Swift's Dictionary hashes every key with seeded SipHash; for
// session keys (a counter shifted left by 8, plus a loop index) that was
// about a tenth of the home loop's time on shape A. Here a key is spread by
// Fibonacci hashing (one multiply) into an open-addressed table with linear
// probing, and removal shifts the following entries back, so no tombstones
// pile up. Key 0 marks an empty slot: session keys start at 1 << 8. Pure.

@frozen
public struct SessionTable<Value> {
    // Inlinable throughout, so that the server's uses are specialized for
    // their value type (a generic call across modules is not, and costs
    // more than the hashing it saves).
    @usableFromInline var keys: [UInt64]
    @usableFromInline var slots: [Value?]
    @usableFromInline var shift: UInt64
    @usableFromInline var stored = 0
    @inlinable public var count: Int { stored }

    @inlinable
    public init() {
        keys = Array(repeating: 0, count: 16)
        slots = Array(repeating: nil, count: 16)
        shift = 64 - 4
    }

    @inlinable @inline(__always)
    func home(_ key: UInt64) -> Int { Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift) }

    @inlinable @inline(__always)
    var mask: Int { keys.count - 1 }

    @inlinable
    public subscript(key: UInt64) -> Value? {
        get {
            var i = home(key)
            while true {
                let k = keys[i]
                if k == key { return slots[i] }
                if k == 0 { return nil }
                i = (i + 1) & mask
            }
        }
        set {
            precondition(key != 0, "session key 0 is reserved")
            if let newValue { insert(key, newValue) } else { remove(key) }
        }
    }

    @inlinable
    mutating func insert(_ key: UInt64, _ value: Value) {
        if (stored + 1) * 4 > keys.count * 3 { grow() }
        var i = home(key)
        while true {
            let k = keys[i]
            if k == key { slots[i] = value; return }
            if k == 0 {
                keys[i] = key
                slots[i] = value
                stored += 1
                return
            }
            i = (i + 1) & mask
        }
    }

    @inlinable
    mutating func remove(_ key: UInt64) {
        var i = home(key)
        while keys[i] != key {
            if keys[i] == 0 { return }
            i = (i + 1) & mask
        }
        // Backward shift: move later entries of the run into the hole when
        // their home is not between the hole and where they sit.
        var hole = i
        var j = (i + 1) & mask
        while keys[j] != 0 {
            let h = home(keys[j])
            let fits = hole <= j ? (h <= hole || h > j) : (h <= hole && h > j)
            if fits {
                keys[hole] = keys[j]
                slots[hole] = slots[j]
                hole = j
            }
            j = (j + 1) & mask
        }
        keys[hole] = 0
        slots[hole] = nil
        stored -= 1
    }

    @inlinable
    mutating func grow() {
        let oldKeys = keys, oldSlots = slots
        keys = Array(repeating: 0, count: oldKeys.count * 2)
        slots = Array(repeating: nil, count: oldKeys.count * 2)
        shift -= 1
        stored = 0
        for (k, v) in zip(oldKeys, oldSlots) where k != 0 { insert(k, v!) }
    }
}
