// Files kept in an S3-compatible bucket (docs/files.md "The S3 store"):
// each file is the object `files/<file id>`, so forgetting a file deletes
// its bytes and every link to them fails. Clients put and get the bytes
// themselves, by presigned URLs: an upload's URL signs the length, the type,
// `If-None-Match: *` (the store refuses a second upload of the id) and,
// when the client gave one, the SHA-256 (the store refuses other bytes).
// Guildhall's own calls (HEAD before a message carries a file, a range GET
// for an image's size, DELETE) block the calling thread: workers only.

import Foundation

public final class S3FileStore: FileStore {
    public let client: S3Client

    public init(_ location: S3Location, timeoutMs: Int = 30_000) throws(S3CallError) {
        client = try S3Client(location, timeoutMs: timeoutMs)
    }

    static func key(_ fileID: UInt64) -> String { "files/\(fileID)" }

    public func stored(_ fileID: UInt64) throws(UploadRefusal) -> StoredFile? {
        let head: StoreAnswer
        do { head = try client.head(Self.key(fileID)) } catch { throw UploadRefusal(503, "the file store did not answer: \(error)") }
        if head.status == 404 { return nil }
        guard head.status == 200, let size = head.header("Content-Length").flatMap(UInt64.init) else {
            throw UploadRefusal(503, "the file store answered \(head.status) for file \(fileID)")
        }
        let type = head.header("Content-Type") ?? "application/octet-stream"
        var file = StoredFile(fileID: fileID, size: size, sha256: "", contentType: type)
        if type.hasPrefix("image/"), size > 0,
           let start = try? client.call("GET", Self.key(fileID), headers: [("Range", "bytes=0-\(min(UInt64(ImageSize.headBytes), size) - 1)")]),
           start.status == 206 || start.status == 200, let (width, height) = ImageSize.of(start.body, contentType: type) {
            (file.width, file.height) = (width, height)
        }
        return file
    }

    public func remove(_ fileID: UInt64) throws(UploadRefusal) {
        let answer: StoreAnswer
        do { answer = try client.delete(Self.key(fileID)) } catch { throw UploadRefusal(503, "the file store did not answer: \(error)") }
        guard answer.status == 204 || answer.status == 200 || answer.status == 404 else {
            throw UploadRefusal(503, "the file store answered \(answer.status) to removing file \(fileID)")
        }
    }

    /// Each file's bytes are their own object: nothing is left unnamed.
    public func sweepUnnamed(graceSeconds: Int) -> Int { 0 }

    /// The URL and headers a client uploads file `fileID` with, for `seconds`:
    /// exactly `size` bytes of `contentType`, once, and the bytes of `sha256` (hex) when given.
    public func uploadURL(_ fileID: UInt64, size: UInt64, contentType: String, sha256: String, seconds: Int,
                          at date: Date = Date()) -> (url: String, headers: [(String, String)]) {
        var headers = [("Content-Length", String(size)), ("Content-Type", contentType), ("If-None-Match", "*")]
        if let digest = Self.bytes(hex: sha256) { headers.append(("x-amz-checksum-sha256", Data(digest).base64EncodedString())) }
        return (client.presignedURL("PUT", Self.key(fileID), headers: headers, expires: seconds, at: date), headers)
    }

    /// A URL that gets file `fileID`'s bytes for `seconds`, saved as `filename`, or shown when `inline`.
    public func downloadURL(_ fileID: UInt64, filename: String, inline: Bool, seconds: Int, at date: Date = Date()) -> String {
        let disposition = (inline ? "inline" : "attachment") + "; filename*=UTF-8''" + SignatureV4.uriEncode(filename)
        return client.presignedURL("GET", Self.key(fileID), query: [("response-content-disposition", disposition)], expires: seconds, at: date)
    }

    private static func bytes(hex: String) -> [UInt8]? {
        guard hex.count == 64 else { return nil }
        var out: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            guard let b = UInt8(hex[i..<j], radix: 16) else { return nil }
            out.append(b)
            i = j
        }
        return out
    }
}
