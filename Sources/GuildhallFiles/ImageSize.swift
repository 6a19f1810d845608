// An image's width and height from its first bytes (docs/files.md), for
// the attachment's metadata: PNG's IHDR, GIF's screen descriptor, WebP's
// VP8/VP8L/VP8X header, and JPEG's first start-of-frame marker. Only the
// header is read, never the image decoded. Pure.

enum ImageSize {
    /// How many leading bytes are enough (a JPEG's frame marker may follow its metadata).
    static let headBytes = 64 * 1024

    static func of(_ b: [UInt8], contentType: String) -> (UInt32, UInt32)? {
        guard contentType.hasPrefix("image/") else { return nil }
        func u16be(_ i: Int) -> UInt32 { UInt32(b[i]) << 8 | UInt32(b[i + 1]) }
        func u16le(_ i: Int) -> UInt32 { UInt32(b[i + 1]) << 8 | UInt32(b[i]) }
        func u32be(_ i: Int) -> UInt32 { u16be(i) << 16 | u16be(i + 2) }
        if b.count >= 24, b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), b[12..<16].elementsEqual(Array("IHDR".utf8)) {
            return (u32be(16), u32be(20))
        }
        if b.count >= 10, b.starts(with: Array("GIF8".utf8)) { return (u16le(6), u16le(8)) }
        if b.count >= 30, b.starts(with: Array("RIFF".utf8)), b[8..<12].elementsEqual(Array("WEBP".utf8)) {
            switch String(decoding: b[12..<16], as: UTF8.self) {
            case "VP8 ": return (u16le(26) & 0x3FFF, u16le(28) & 0x3FFF)
            case "VP8L":
                let bits = UInt32(b[21]) | UInt32(b[22]) << 8 | UInt32(b[23]) << 16 | UInt32(b[24]) << 24
                return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
            case "VP8X":
                let w = UInt32(b[24]) | UInt32(b[25]) << 8 | UInt32(b[26]) << 16
                let h = UInt32(b[27]) | UInt32(b[28]) << 8 | UInt32(b[29]) << 16
                return (w + 1, h + 1)
            default: return nil
            }
        }
        if b.count >= 4, b[0] == 0xFF, b[1] == 0xD8 {
            var i = 2
            while i + 9 < b.count {
                guard b[i] == 0xFF else { return nil }
                let marker = b[i + 1]
                if marker == 0xFF { i += 1; continue }
                let length = Int(u16be(i + 2))
                // Start of frame: every SOFn but DHT (C4), JPG (C8) and DAC (CC).
                if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                    return (u16be(i + 7), u16be(i + 5))
                }
                i += 2 + length
            }
        }
        return nil
    }
}
