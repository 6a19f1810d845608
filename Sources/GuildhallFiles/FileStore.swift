// What Guildhall asks of wherever files' bytes are kept, the local folder
// (LocalFileStore) or an S3 bucket: whether an upload arrived, and
// forgetting one so that its links stop working. Every call may block:
// worker threads only.

public protocol FileStore: Sendable {
    /// What arrived for `fileID`: nil when nothing did (never uploaded, or
    /// removed). Throws (503) when the store cannot say now.
    func stored(_ fileID: UInt64) throws(UploadRefusal) -> StoredFile?
    /// Forgets `fileID`: its links stop working. Its bytes may stay for a
    /// sweep when other files share them.
    func remove(_ fileID: UInt64) throws(UploadRefusal)
    /// Removes bytes no file names any more, older than `graceSeconds`; how many (a store keeping each file's bytes apart has none).
    func sweepUnnamed(graceSeconds: Int) -> Int
}

extension LocalFileStore: FileStore {
    public func sweepUnnamed(graceSeconds: Int) -> Int { sweepBlobs(graceSeconds: graceSeconds) }
}
