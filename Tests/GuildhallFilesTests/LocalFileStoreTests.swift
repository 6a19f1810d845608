// The local store on a temporary folder: an upload kept whole by content,
// once per file id; one that does not match what was asked, or is
// abandoned, leaves nothing; identical bytes stored once; image sizes read
// from headers.

import Crypto
import Foundation
import Testing
@testable import GuildhallFiles

@Suite struct LocalFileStoreTests {
    let store: LocalFileStore
    init() throws { store = try LocalFileStore(folder: NSTemporaryDirectory() + "guildhall-files-\(UUID().uuidString)") }

    private func hex(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }
    private func leftovers() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: store.folder + "/incoming")) ?? []
    }

    @Test func anUploadIsKeptByContentOncePerFile() throws {
        let bytes = Array("hello, files".utf8)
        let incoming = try store.begin(7, size: UInt64(bytes.count), sha256: hex(bytes), contentType: "text/plain")
        #expect(throws: UploadRefusal(409, "an upload of file 7 is under way")) { _ = try store.begin(7, size: 12, sha256: "", contentType: "text/plain") }
        #expect(incoming.append(Array(bytes[..<5])) && incoming.append(Array(bytes[5...])))
        let file = try incoming.finish()
        #expect(file == StoredFile(fileID: 7, size: 12, sha256: hex(bytes), contentType: "text/plain"))
        #expect(store.stored(7) == file)
        #expect(FileManager.default.contents(atPath: store.blobPath(file.sha256)).map(Array.init) == bytes)
        #expect(throws: UploadRefusal(409, "file 7 was uploaded already; ask for a new upload")) { _ = try store.begin(7, size: 12, sha256: "", contentType: "text/plain") }

        // The same bytes under another id: one blob.
        let again = try store.begin(8, size: 12, sha256: "", contentType: "text/plain")
        #expect(again.append(bytes))
        #expect(try again.finish().sha256 == file.sha256)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.folder + "/blobs/" + String(file.sha256.prefix(2))) == [file.sha256])
        try store.remove(7)
        #expect(store.stored(7) == nil && store.stored(8) != nil)
        #expect(leftovers().isEmpty)
    }

    @Test func whatDoesNotMatchOrIsAbandonedLeavesNothing() throws {
        let short = try store.begin(1, size: 10, sha256: "", contentType: "text/plain")
        #expect(short.append([1, 2, 3]))
        #expect(throws: UploadRefusal(400, "the upload was 3 bytes, not the 10 asked for")) { _ = try short.finish() }
        let long = try store.begin(2, size: 2, sha256: "", contentType: "text/plain")
        #expect(!long.append([1, 2, 3]), "more than asked for is refused as it arrives")
        long.abandon()
        let wrong = try store.begin(3, size: 3, sha256: String(repeating: "0", count: 64), contentType: "text/plain")
        #expect(wrong.append([1, 2, 3]))
        #expect(throws: UploadRefusal.self) { _ = try wrong.finish() }
        let dropped = try store.begin(4, size: 3, sha256: "", contentType: "text/plain")
        #expect(dropped.append([1]))
        dropped.abandon()
        for id: UInt64 in 1...4 { #expect(store.stored(id) == nil) }
        #expect(leftovers().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.folder + "/blobs").isEmpty)
        // Nothing was stored, so each id may be uploaded now.
        let retry = try store.begin(1, size: 1, sha256: "", contentType: "text/plain")
        #expect(retry.append([9]))
        #expect(try retry.finish().size == 1)
    }

    /// A node stopped mid-upload: reopening the folder clears what it left, and the id takes its upload.
    @Test func whatAnUploadLeftWhenTheNodeStoppedIsClearedOnOpening() throws {
        let half = try store.begin(5, size: 4, sha256: "", contentType: "text/plain")
        #expect(half.append([1, 2]))
        let reopened = try LocalFileStore(folder: store.folder)
        #expect(leftovers().isEmpty)
        let again = try reopened.begin(5, size: 4, sha256: "", contentType: "text/plain")
        #expect(again.append([1, 2, 3, 4]))
        #expect(try again.finish().size == 4)
    }

    @Test func imageSizesComeFromTheirHeaders() {
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        png += [0, 0, 2, 128, 0, 0, 1, 224, 8, 6, 0, 0, 0]
        #expect(ImageSize.of(png, contentType: "image/png").map { [$0.0, $0.1] } == [640, 480])
        let gif: [UInt8] = Array("GIF89a".utf8) + [0x40, 0x01, 0xF0, 0x00]
        #expect(ImageSize.of(gif, contentType: "image/gif").map { [$0.0, $0.1] } == [320, 240])
        // A JPEG: SOI, an APP0 segment, then SOF0 with height 600 and width 800.
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x02, 0x58, 0x03, 0x20, 0x03, 0, 0, 0]
        #expect(ImageSize.of(jpeg, contentType: "image/jpeg").map { [$0.0, $0.1] } == [800, 600])
        #expect(ImageSize.of(png, contentType: "application/octet-stream") == nil, "only what says it is an image")
        #expect(ImageSize.of([0xFF, 0xD8, 0x00], contentType: "image/jpeg") == nil)
    }
}
