// The damaged copies of a good frame that the hand-written readers are
// checked against the generated decoder with: every prefix, and every byte
// changed to a few telling values. Pure.

enum FrameVariants {
    static func of(_ good: [UInt8]) -> [[UInt8]] {
        var variants: [[UInt8]] = (0...good.count).map { Array(good.prefix($0)) }
        for i in good.indices {
            for b: UInt8 in [0x00, 0x01, 0x7F, 0x80, 0xFF, good[i] ^ 0x08] {
                var v = good
                v[i] = b
                variants.append(v)
            }
        }
        return variants
    }
}
