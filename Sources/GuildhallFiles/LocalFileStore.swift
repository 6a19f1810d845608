// The embedded file store (docs/files.md "The local store"): files in a
// folder, by content. An upload is written to `incoming/` while it
// arrives, hashed as it goes; once whole and checked it becomes
// `blobs/<first two hex>/<sha256>` (a file already there with the same
// bytes is kept and the new copy dropped: identical content is stored once)
// and a small record `uploads/<file id>` says which blob the file is. The
// record is written last (temporary file, fsync, rename), so a file either
// has a whole, synced blob or does not exist; an interrupted upload leaves
// nothing but its temporary file, which is removed. `uploads/<id>.part`,
// created exclusively, is held while an upload of that id is under way, so
// one file id takes one upload at a time, and none once it has one. A
// blob no record names any more is removed by the sweep; placing a blob and
// writing its record happen under one lock with that sweep, so a new record
// cannot come to name a blob the sweep is removing.
// Blocking file I/O: worker threads only.

import Crypto
import Foundation
import Synchronization

/// What the store keeps of an uploaded file.
public struct StoredFile: Sendable, Equatable, Codable {
    public var fileID: UInt64
    public var size: UInt64
    public var sha256: String
    public var contentType: String
    /// Pixels, for images whose header says (0 otherwise).
    public var width: UInt32 = 0, height: UInt32 = 0

    public init(fileID: UInt64, size: UInt64, sha256: String, contentType: String, width: UInt32 = 0, height: UInt32 = 0) {
        self.fileID = fileID; self.size = size; self.sha256 = sha256; self.contentType = contentType; self.width = width; self.height = height
    }
}

/// Why an upload was not stored; `status` is the HTTP answer.
public struct UploadRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: Int
    public let description: String
    public init(_ status: Int, _ description: String) { self.status = status; self.description = description }
}

public final class LocalFileStore: Sendable {
    public let folder: String
    /// Held while a blob is placed and its record written, and while the sweep removes blobs.
    let placing = Mutex(())

    /// Opens the folder; what uploads under way when the node last stopped left
    /// (their temporary files and claims) is removed, so their ids take an upload again.
    public init(folder: String) throws(UploadRefusal) {
        self.folder = folder
        do {
            for sub in ["incoming", "blobs", "uploads"] {
                try FileManager.default.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: true)
            }
            for name in try FileManager.default.contentsOfDirectory(atPath: folder + "/incoming") { unlink("\(folder)/incoming/\(name)") }
            for name in try FileManager.default.contentsOfDirectory(atPath: folder + "/uploads") where name.hasSuffix(".part") || name.hasSuffix(".new") {
                unlink("\(folder)/uploads/\(name)")
            }
        } catch {
            throw UploadRefusal(500, "cannot open the files folder \(folder): \(error)")
        }
    }

    /// The record of an uploaded file, or nil when it has none (never uploaded, or removed).
    public func stored(_ fileID: UInt64) -> StoredFile? {
        guard let data = FileManager.default.contents(atPath: recordPath(fileID)) else { return nil }
        return try? JSONDecoder().decode(StoredFile.self, from: data)
    }

    /// Where a stored file's bytes are.
    public func blobPath(_ sha256: String) -> String { "\(folder)/blobs/\(sha256.prefix(2))/\(sha256)" }

    /// Forgets an upload: its record goes (links to it stop working); its blob stays for the sweep.
    public func remove(_ fileID: UInt64) throws(UploadRefusal) {
        guard unlink(recordPath(fileID)) == 0 || errno == ENOENT else {
            throw UploadRefusal(503, "cannot remove file \(fileID): \(String(cString: strerror(errno)))")
        }
        syncFolder(of: recordPath(fileID))
    }

    /// Starts receiving file `fileID`; 409 when it has its upload, or one is under way.
    public func begin(_ fileID: UInt64, size: UInt64, sha256: String, contentType: String) throws(UploadRefusal) -> IncomingFile {
        guard stored(fileID) == nil else { throw UploadRefusal(409, "file \(fileID) was uploaded already; ask for a new upload") }
        let part = recordPath(fileID) + ".part"
        let claim = open(part, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard claim >= 0 else {
            throw errno == EEXIST ? UploadRefusal(409, "an upload of file \(fileID) is under way") : UploadRefusal(503, "cannot write files: \(String(cString: strerror(errno)))")
        }
        close(claim)
        let temporary = "\(folder)/incoming/\(fileID)-\(UInt64.random(in: 0...UInt64.max))"
        let fd = open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            unlink(part)
            throw UploadRefusal(503, "cannot write files: \(String(cString: strerror(errno)))")
        }
        return IncomingFile(store: self, fileID: fileID, expected: (size, sha256, contentType), fd: fd, temporary: temporary, part: part)
    }

    func recordPath(_ fileID: UInt64) -> String { "\(folder)/uploads/\(fileID)" }

    /// Removes the blobs no record names that are older than `graceSeconds`
    /// (a blob is placed just before its record is written); how many.
    public func sweepBlobs(graceSeconds: Int, now: Date = Date()) -> Int {
        placing.withLock { _ in
            var named = Set<String>()
            let records = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/uploads")) ?? []
            for name in records where UInt64(name) != nil {
                if let data = FileManager.default.contents(atPath: folder + "/uploads/" + name),
                   let file = try? JSONDecoder().decode(StoredFile.self, from: data) {
                    named.insert(file.sha256)
                } else {
                    // A record that cannot be read: keep every blob rather than guess.
                    return 0
                }
            }
            var removed = 0
            let cutoff = now.addingTimeInterval(-Double(graceSeconds))
            for shard in (try? FileManager.default.contentsOfDirectory(atPath: folder + "/blobs")) ?? [] {
                let dir = folder + "/blobs/" + shard
                for blob in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] where !named.contains(blob) {
                    let path = dir + "/" + blob
                    guard let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                          modified < cutoff, unlink(path) == 0 else { continue }
                    removed += 1
                }
            }
            return removed
        }
    }

    /// Writes `data` to `path` whole or not at all: a temporary file, synced, renamed over it, the folder synced.
    func writeAtomically(_ data: [UInt8], to path: String) throws(UploadRefusal) {
        let temporary = path + ".new"
        let fd = open(temporary, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw UploadRefusal(503, "cannot write files: \(String(cString: strerror(errno)))") }
        let ok = data.withUnsafeBytes { writeAll(fd, $0) } && fsync(fd) == 0
        close(fd)
        guard ok, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw UploadRefusal(503, "cannot write files: \(String(cString: strerror(errno)))")
        }
        syncFolder(of: path)
    }

    func syncFolder(of path: String) {
        let dir = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 { fsync(dir); close(dir) }
    }
}

/// One upload arriving: bytes appended and hashed as they come, then kept or dropped.
public final class IncomingFile: @unchecked Sendable {
    // Used by one worker queue at a time, in order (the unchecked conformance rests on that).
    private let store: LocalFileStore
    public let fileID: UInt64
    private let expected: (size: UInt64, sha256: String, contentType: String)
    private var fd: Int32
    private let temporary: String, part: String
    private var hasher = SHA256()
    private var received: UInt64 = 0
    /// The first bytes, for an image's size.
    private var head: [UInt8] = []

    init(store: LocalFileStore, fileID: UInt64, expected: (UInt64, String, String), fd: Int32, temporary: String, part: String) {
        self.store = store; self.fileID = fileID; self.expected = expected; self.fd = fd; self.temporary = temporary; self.part = part
    }

    /// Appends bytes; false when they could not be written (the upload is then abandoned).
    public func append(_ bytes: [UInt8]) -> Bool {
        received += UInt64(bytes.count)
        guard received <= expected.size else { return false }
        hasher.update(data: bytes)
        if head.count < ImageSize.headBytes { head += bytes.prefix(ImageSize.headBytes - head.count) }
        return bytes.withUnsafeBytes { writeAll(fd, $0) }
    }

    /// Checks what arrived against what was asked, and keeps it.
    public func finish() throws(UploadRefusal) -> StoredFile {
        guard received == expected.size else {
            abandon()
            throw UploadRefusal(400, "the upload was \(received) bytes, not the \(expected.size) asked for")
        }
        let sha = hasher.finalize().map { String($0, radix: 16).leftPadded(2) }.joined()
        guard expected.sha256.isEmpty || sha == expected.sha256 else {
            abandon()
            throw UploadRefusal(400, "the upload's SHA-256 is \(sha), not the \(expected.sha256) asked for")
        }
        guard fsync(fd) == 0 else {
            abandon()
            throw UploadRefusal(503, "cannot write files: \(String(cString: strerror(errno)))")
        }
        close(fd)
        fd = -1
        let (width, height) = ImageSize.of(head, contentType: expected.contentType) ?? (0, 0)
        let file = StoredFile(fileID: fileID, size: received, sha256: sha, contentType: expected.contentType, width: width, height: height)
        let refusal: UploadRefusal? = store.placing.withLock { _ in place(file) }
        unlink(part)
        if let refusal { throw refusal }
        return file
    }

    /// Moves the checked bytes to their blob and writes the record (under the store's lock); why not, if not.
    private func place(_ file: StoredFile) -> UploadRefusal? {
        let blob = store.blobPath(file.sha256)
        do {
            try FileManager.default.createDirectory(atPath: (blob as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        } catch {
            abandon()
            return UploadRefusal(503, "cannot write files: \(error)")
        }
        // The same bytes already there: kept, the new copy dropped.
        if access(blob, F_OK) == 0 {
            unlink(temporary)
        } else if rename(temporary, blob) == 0 {
            store.syncFolder(of: blob)
        } else {
            abandon()
            return UploadRefusal(503, "cannot write files: \(String(cString: strerror(errno)))")
        }
        do {
            try store.writeAtomically(Array(try JSONEncoder().encode(file)), to: store.recordPath(file.fileID))
        } catch let refusal as UploadRefusal {
            return refusal
        } catch {
            return UploadRefusal(500, "cannot record the upload: \(error)")
        }
        return nil
    }

    /// Drops what arrived; the file id may be uploaded again.
    public func abandon() {
        if fd >= 0 { close(fd); fd = -1 }
        unlink(temporary)
        unlink(part)
    }
}

/// Writes all of `bytes` to `fd`; false on an error.
func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            return false
        }
        offset += n
    }
    return true
}
