// The file store's calls for a home, on worker threads (each may block: a
// disk, or S3 over the network), answered through the loop's inbox
// (`LoopMessage.fileWork`). Sendable: made by the node, used from its loop.

import Dispatch
import GuildhallFiles

/// What a worker found of some files: each one that arrived, or why the store could not say.
typealias FileCheck = Result<[UInt64: StoredFile], UploadRefusal>

final class FileWork: Sendable {
    let store: any FileStore
    private let queue = DispatchQueue(label: "guildhall-file-work", attributes: .concurrent)
    /// Hands a check's outcome, by its ticket, to the loop that asked.
    private let post: @Sendable (UInt64, FileCheck) -> Void

    init(store: any FileStore, post: @escaping @Sendable (UInt64, FileCheck) -> Void) {
        self.store = store
        self.post = post
    }

    /// Asks what arrived of `ids`; the outcome comes back with `ticket`.
    func check(_ ids: [UInt64], ticket: UInt64) {
        queue.async { [store, post] in
            do throws(UploadRefusal) {
                var found: [UInt64: StoredFile] = [:]
                for id in ids { if let f = try store.stored(id) { found[id] = f } }
                post(ticket, .success(found))
            } catch {
                post(ticket, .failure(error))
            }
        }
    }

    /// Forgets `ids` in the store; what fails stays for the sweep, which finds it by its row.
    func remove(_ ids: [UInt64]) {
        queue.async { [store] in
            for id in ids { try? store.remove(id) }
        }
    }
}
