// Bytes a statement binds in place (SQLITE_STATIC) for one step: bound
// "transient", SQLite copied each text and blob into an allocation of its
// own and freed it after, two or three a message in the writer's multi-row
// inserts (their binds were 15% of the writer's samples on shape C of
// docs/performance.md). Here each value is copied once into blocks that
// never move while the statement runs, and the blocks are kept for the next
// statement. Writer thread only.
//
// A binding made here points into the arena: the statement must be stepped
// before `reset()` and bound anew before it runs again (the writer's plain
// inserts rebind every parameter each time, `Statement.rebind`; its full
// insert clears its bindings first, `Statement.reset`).

import CSQLite

final class BindArena {
    private static let blockBytes = 64 * 1024
    private var blocks: [UnsafeMutableRawPointer] = []
    /// Values larger than a block, each in an allocation of its own until `reset()`.
    private var large: [UnsafeMutableRawPointer] = []
    private var block = 0, used = 0

    deinit {
        for b in blocks { b.deallocate() }
        for b in large { b.deallocate() }
    }

    /// A copy of `bytes` that stays where it is until `reset()`.
    func place(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawPointer {
        let n = bytes.count
        let p: UnsafeMutableRawPointer
        if n > Self.blockBytes {
            p = .allocate(byteCount: n, alignment: 1)
            large.append(p)
        } else {
            if blocks.isEmpty || used + n > Self.blockBytes {
                if !blocks.isEmpty { block += 1 }
                if block == blocks.count { blocks.append(.allocate(byteCount: Self.blockBytes, alignment: 16)) }
                used = 0
            }
            p = blocks[block] + used
            used += n
        }
        if n > 0 { p.copyMemory(from: bytes.baseAddress!, byteCount: n) }
        return UnsafeRawPointer(p)
    }

    /// Everything placed is free again (once the statements binding it have stepped).
    func reset() {
        block = 0
        used = 0
        for b in large { b.deallocate() }
        large.removeAll(keepingCapacity: true)
    }
}

extension Statement {
    /// Binds a copy of the string's UTF-8 held by `arena` (see BindArena).
    func bind(_ index: Int32, _ value: String, in arena: BindArena) {
        guard !value.isEmpty else { return bind(index, value) }
        var value = value
        value.withUTF8 { utf8 in
            let p = arena.place(UnsafeRawBufferPointer(utf8))
            sqlite3_bind_text(stmt, index, p.assumingMemoryBound(to: CChar.self), Int32(utf8.count), nil)
        }
    }

    /// Binds a copy of the bytes held by `arena`.
    func bind(_ index: Int32, _ value: [UInt8], in arena: BindArena) {
        guard !value.isEmpty else { return bind(index, value) }
        value.withUnsafeBytes { raw in
            _ = sqlite3_bind_blob(stmt, index, arena.place(raw), Int32(raw.count), nil)
        }
    }
}
