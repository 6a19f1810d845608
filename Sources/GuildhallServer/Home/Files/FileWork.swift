// The file store's calls for a home, on worker threads (each may block: a
// disk, or S3 over the network), answered through the loop's inbox
// (`LoopMessage.fileWork`). Sendable: made by the node, used from its loop.

import Dispatch
import GuildhallFiles

/// What a worker found of some files: each one that arrived, or why the store could not say.
typealias FileCheck = Result<[UInt64: StoredFile], UploadRefusal>

/// A worker's answer to a home.
enum FileWorkOutcome: Sendable {
    case checked(FileCheck)
    /// The files the store forgot (the others failed, and stay for the next sweep), and the blobs it removed that nothing named.
    case removed([UInt64], blobs: Int)
}

final class FileWork: Sendable {
    let storage: FileStorage
    var store: any FileStore { storage.store }
    private let queue = DispatchQueue(label: "guildhall-file-work", attributes: .concurrent)
    /// Hands an outcome, by its ticket, to the loop that asked.
    private let post: @Sendable (UInt64, FileWorkOutcome) -> Void

    init(storage: FileStorage, post: @escaping @Sendable (UInt64, FileWorkOutcome) -> Void) {
        self.storage = storage
        self.post = post
    }

    /// Asks what arrived of `ids`; the outcome comes back with `ticket`.
    func check(_ ids: [UInt64], ticket: UInt64) {
        queue.async { [store, post] in
            do throws(UploadRefusal) {
                var found: [UInt64: StoredFile] = [:]
                for id in ids { if let f = try store.stored(id) { found[id] = f } }
                post(ticket, .checked(.success(found)))
            } catch {
                post(ticket, .checked(.failure(error)))
            }
        }
    }

    /// Forgets `ids` in the store; what fails stays for the sweep, which finds it by its row.
    func remove(_ ids: [UInt64]) {
        queue.async { [store] in
            for id in ids { try? store.remove(id) }
        }
    }

    /// Forgets `ids` and, with `blobGraceSeconds`, removes the bytes nothing names; the outcome comes back with `ticket`.
    func sweep(_ ids: [UInt64], blobGraceSeconds: Int?, ticket: UInt64) {
        queue.async { [store, post] in
            let removed = ids.filter { id in (try? store.remove(id)) != nil }
            let blobs = blobGraceSeconds.map { store.sweepUnnamed(graceSeconds: $0) } ?? 0
            post(ticket, .removed(removed, blobs: blobs))
        }
    }
}
