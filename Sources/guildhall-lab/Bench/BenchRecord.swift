// The payload every benchmark message carries, whatever the server: a magic
// marker, the publisher, its sequence and the send time. Receivers find
// records by scanning the byte stream for the marker, so the same code reads
// Guildhall events, Redis pushes and NATS messages without parsing them.
//
// Layout (little-endian): magic (8) | publisher (4) | seq (8) | sent ns (8) | padding.

import Foundation

enum BenchRecord {
    static let magic: [UInt8] = Array("gHbEnCh1".utf8)
    static let headerSize = 28
    static let magicWord: UInt64 = magic.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }

    /// A payload of `size` bytes (at least the header) for (publisher, seq) sent now.
    static func make(size: Int, publisher: UInt32, seq: UInt64, sentNanos: UInt64, into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: magic)
        withUnsafeBytes(of: publisher.littleEndian) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: seq.littleEndian) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: sentNanos.littleEndian) { out.append(contentsOf: $0) }
        while out.count < size { out.append(0x2E) }
    }

    /// The (publisher, seq) of the record that `bytes` start with, if they do.
    static func read(_ bytes: Data) -> (publisher: UInt32, seq: UInt64)? {
        guard bytes.count >= headerSize, bytes.prefix(8).elementsEqual(magic) else { return nil }
        let b = Array(bytes.prefix(20))
        let publisher = b[8..<12].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let seq = b[12..<20].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return (publisher, seq)
    }

    static func monotonicNanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

/// Finds records in a byte stream split arbitrarily across reads.
struct RecordScanner {
    /// The last bytes of the previous chunk, in case a record straddles two reads.
    private var carry: [UInt8] = []

    /// Calls `found(publisher, seq, sentNanos)` for each complete record in `chunk`.
    mutating func scan(_ chunk: UnsafeRawBufferPointer, _ found: (UInt32, UInt64, UInt64) -> Void) {
        let keep = BenchRecord.headerSize - 1
        if carry.isEmpty {
            let consumed = Self.scan(chunk, found)
            carry = Array(chunk[max(consumed, chunk.count - keep)...])
            return
        }
        // Join the carried tail with the head of this chunk for the straddling case.
        var joined = carry
        joined.append(contentsOf: chunk.prefix(keep))
        joined.withUnsafeBytes { j in _ = Self.scan(j, found) }
        let consumedInChunk = Self.scan(chunk, found)
        carry = Array(chunk[max(consumedInChunk, chunk.count - keep)...])
    }

    /// Scans one buffer; returns the offset after the last record found.
    private static func scan(_ b: UnsafeRawBufferPointer, _ found: (UInt32, UInt64, UInt64) -> Void) -> Int {
        guard let base = b.baseAddress, b.count >= BenchRecord.headerSize else { return 0 }
        var offset = 0
        var end = 0
        let first = Int32(BenchRecord.magic[0])
        let magic = BenchRecord.magicWord
        do {
            while offset + BenchRecord.headerSize <= b.count {
                // memchr finds the first magic byte fast; the whole magic is then one 8-byte compare.
                guard let hit = memchr(base + offset, first, b.count - offset - BenchRecord.headerSize + 1) else { break }
                let at = base.distance(to: UnsafeRawPointer(hit))
                if b.loadUnaligned(fromByteOffset: at, as: UInt64.self) != magic {
                    offset = at + 1
                    continue
                }
                let publisher = UInt32(littleEndian: b.loadUnaligned(fromByteOffset: at + 8, as: UInt32.self))
                let seq = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: at + 12, as: UInt64.self))
                let sent = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: at + 20, as: UInt64.self))
                found(publisher, seq, sent)
                offset = at + BenchRecord.headerSize
                end = offset
            }
        }
        return end
    }
}

/// Latencies in a log-linear histogram: 16 sub-buckets per power of two, in nanoseconds.
struct LatencyHistogram {
    private var buckets = [UInt64](repeating: 0, count: 64 * 16)
    private(set) var count: UInt64 = 0
    private(set) var max: UInt64 = 0

    mutating func record(_ nanos: UInt64) {
        let v = Swift.max(nanos, 1)
        let msb = 63 - v.leadingZeroBitCount
        let sub = msb >= 4 ? Int((v >> UInt64(msb - 4)) & 0xF) : Int(v & 0xF)
        buckets[msb * 16 + sub] += 1
        count += 1
        if nanos > max { max = nanos }
    }

    mutating func merge(_ other: LatencyHistogram) {
        for i in 0..<buckets.count { buckets[i] += other.buckets[i] }
        count += other.count
        max = Swift.max(max, other.max)
    }

    /// The value at quantile `q` (0...1), as the bucket's upper bound in nanoseconds.
    func quantile(_ q: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = UInt64((Double(count) * q).rounded(.up))
        var seen: UInt64 = 0
        for (i, n) in buckets.enumerated() where n > 0 {
            seen += n
            if seen >= rank {
                let msb = i / 16, sub = UInt64(i % 16)
                if msb < 4 { return sub }
                return Swift.min(((16 + sub + 1) << UInt64(msb - 4)) - 1, max)
            }
        }
        return max
    }
}
