// The hand-written protobuf reader's strings: ASCII, other valid UTF-8 and
// invalid bytes must read as the generated decoder reads them (the same
// string, or refused), whichever path the reader takes for them.

import Foundation
import SwiftProtobuf
import Testing
@testable import GuildhallWire

@Suite struct ProtoReaderTests {
    static let cases: [[UInt8]] = [
        [], Array("fbp0".utf8), Array("b".utf8), Array("client-id 0123456789".utf8), [0x7F, 0x00, 0x41],
        Array("héllo 👋 wörld".utf8), Array("日本語".utf8),
        [0xFF], [0x41, 0xC3], [0xF0, 0x9F, 0x98, 0x41], [0xED, 0xA0, 0x80], [0x41, 0x80, 0x42],
    ]

    @Test(arguments: cases)
    func aStringReadsAsTheGeneratedDecoderReadsIt(bytes: [UInt8]) {
        // GHError.message (field 2) carries the bytes as a string.
        var w = ProtoWriter()
        bytes.withUnsafeBytes { w.lengthDelimited(2, $0) }
        let encoded = w.bytes
        let read: String?? = encoded.withUnsafeBytes { buffer in
            var r = ProtoReader(buffer)
            guard let f = r.field(), f.number == 2 else { return nil }
            return .some(r.string())
        }
        let generated = try? GHError(serializedBytes: encoded)
        #expect(read == .some(generated?.message))
        #expect(read == .some(String(validating: bytes, as: UTF8.self)))
    }
}
