// The hand-written protobuf writer's embedded messages: written in place,
// their length patched in afterwards (moving the content when the length
// takes more than one byte), they must come out exactly as a field whose
// content was encoded first, at every length where the prefix grows.

import Testing
@testable import GuildhallWire

@Suite struct ProtoWriterTests {
    @Test(arguments: [0, 1, 127, 128, 129, 300, 16_383, 16_384, 16_385, 2_097_151, 2_097_152])
    func anEmbeddedMessageWrittenInPlaceEqualsOneEncodedFirst(length: Int) {
        let content = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var inPlace = ProtoWriter()
        inPlace.uint(1, 99)
        inPlace.message(2) { w in
            w.uint(1, 5)
            content.withUnsafeBytes { w.lengthDelimited(3, $0) }
        }
        inPlace.uint(4, 1)

        var inner = ProtoWriter()
        inner.uint(1, 5)
        content.withUnsafeBytes { inner.lengthDelimited(3, $0) }
        var encodedFirst = ProtoWriter()
        encodedFirst.uint(1, 99)
        encodedFirst.embedded(2, inner.bytes)
        encodedFirst.uint(4, 1)

        #expect(inPlace.bytes == encodedFirst.bytes)
    }

    @Test func nestedMessagesPastOneLengthByteDecodeInTheStandardRuntime() throws {
        let text = String(repeating: "é", count: 200)
        var w = ProtoWriter()
        // Frame.response (field 2) holding Response.id (1) and Response.error (2), whose message is long.
        w.message(2) { r in
            r.uint(1, 7)
            r.message(2) { e in
                e.uint(1, 400)
                e.string(2, text)
            }
        }
        let frame = try GHFrame(serializedBytes: w.bytes)
        #expect(frame.response.id == 7)
        #expect(frame.response.error.code.rawValue == 400)
        #expect(frame.response.error.message == text)
    }
}
