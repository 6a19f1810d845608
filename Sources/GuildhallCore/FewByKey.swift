// Values by id where there are almost always one or two: a user's sessions
// at a home, their idle flags; as `FewIDs` (no values), a user's sessions on
// a gateway and the servers and channels a session holds there. The first entry is kept inline and
// the rest in an array searched in turn (a user has at most
// `max-sessions-per-user` sessions). A dictionary per user was an allocation
// of 96-150 bytes for its one entry, held by every online user
// (`bench connections`, docs/performance.md). Value semantics; order is not
// kept. No I/O. Inlinable, so the server's modules get it specialized: called
// generically across the module boundary, every use instantiated its type
// metadata at run time (`swift_getGenericMetadata`; with the key paths below,
// 11% of the loop at shape F).

public struct FewByKey<Value>: Sequence {
    public typealias Element = (key: UInt64, value: Value)
    @usableFromInline var first: Element?
    @usableFromInline var rest: [Element] = []

    @inlinable public init() {}

    @inlinable public var isEmpty: Bool { first == nil }
    @inlinable public var count: Int { first == nil ? 0 : 1 + rest.count }

    @inlinable public subscript(key: UInt64) -> Value? {
        get {
            if let first, first.key == key { return first.value }
            return rest.first { $0.key == key }?.value
        }
        set {
            if let f = first, f.key == key {
                if let newValue { first = (key, newValue) } else { first = rest.popLast() }
            } else if let i = rest.firstIndex(where: { $0.key == key }) {
                if let newValue {
                    rest[i].value = newValue
                } else {
                    rest.swapAt(i, rest.count - 1)
                    rest.removeLast()
                }
            } else if let newValue {
                if first == nil { first = (key, newValue) } else { rest.append((key, newValue)) }
            }
        }
    }

    // Closures, not key paths (`lazy.map(\.key)`): a key path into a generic
    // type is instantiated at run time on every call (`_swift_getKeyPath`),
    // which was a tenth of the loop at one subscriber (shape F: the sender's
    // sessions are looked up on every send).
    @inlinable public var keys: LazyMapSequence<FewByKey, UInt64> { lazy.map { $0.key } }
    @inlinable public var values: LazyMapSequence<FewByKey, Value> { lazy.map { $0.value } }

    public struct Iterator: IteratorProtocol {
        @usableFromInline let few: FewByKey
        @usableFromInline var index = -1

        @inlinable init(_ few: FewByKey) { self.few = few }

        @inlinable public mutating func next() -> Element? {
            defer { index += 1 }
            if index < 0 { return few.first }
            return index < few.rest.count ? few.rest[index] : nil
        }
    }

    @inlinable public func makeIterator() -> Iterator { Iterator(self) }
    @inlinable public var underestimatedCount: Int { count }
}

extension FewByKey: Sendable where Value: Sendable {}

/// Ids where there is almost always one, kept without an allocation.
public typealias FewIDs = FewByKey<Void>

extension FewByKey where Value == Void {
    @inlinable public mutating func insert(_ id: UInt64) { self[id] = () }
    @inlinable public mutating func remove(_ id: UInt64) { self[id] = nil }
}
