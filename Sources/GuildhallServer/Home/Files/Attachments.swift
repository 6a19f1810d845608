// Sending files (docs/files.md "Sending files"): what a send's file ids
// name, checked before the message is stored. Each must be a row of the
// sender's uploads to this channel or conversation that no message carries
// yet, and its bytes must have arrived (the file store is asked on a
// worker). While a send naming a file is under way the file is claimed here,
// so that two sends cannot both carry it; the claim ends when that send is
// stored (the file's row names the message from then on) or is not. When a
// message is removed its files are forgotten in the store, which is what
// makes every link made for them stop working. Loop thread only.

import GuildhallCore
import GuildhallFiles
import GuildhallStore

final class Attachments: HomePart {
    unowned let home: Home
    /// The file store's worker (nil: this node keeps no files).
    var work: FileWork?
    /// Files named by a send under way.
    private var claimed = Set<UInt64>()
    /// Checks with a worker, by ticket.
    private var checks: [UInt64: (FileCheck) -> Void] = [:]
    private var nextTicket: UInt64 = 0

    init(home: Home) { self.home = home }

    /// Checks and claims the files `ids` for a send by `s.user` to
    /// (`serverID`, `channelID`), then hands on what the message will keep
    /// of them; or answers request `id` why not (and claims nothing).
    func resolve(_ ids: [UInt64], serverID: ServerID, channelID: UInt64, id: UInt64, for s: HomeSession,
                 then: @escaping ([FileAttachment]) -> Void) {
        guard let work else { return s.fail(id, Failure(.unavailable, "this node keeps no files")) }
        if let busy = ids.first(where: claimed.contains) {
            return s.fail(id, Failure(.conflict, "file \(busy) is being sent in another message"))
        }
        claimed.formUnion(ids)
        let refuse = { [unowned self] (f: Failure) in
            release(ids)
            s.fail(id, f)
        }
        read(.files(ids: ids)) { found in
            guard found.error == nil else { return refuse(Failure(.unavailable, "storage is unavailable; retry later")) }
            var rows: [UInt64: FileRecord] = [:]
            for f in found.files { rows[f.id] = f }
            for fid in ids {
                // Another's file, or one for another place, is answered as one that does not exist.
                guard let f = rows[fid], f.uploader == s.user, f.serverID == serverID, f.channelID == channelID else {
                    return refuse(.notFound("file \(fid) not found: attach files you asked to upload here"))
                }
                guard f.messageUID == 0, !f.removed else {
                    return refuse(Failure(.conflict, "file \(fid) is in a message already; upload it again to send it again"))
                }
            }
            self.nextTicket += 1
            self.checks[self.nextTicket] = { outcome in
                switch outcome {
                case .failure: refuse(Failure(.unavailable, "the file store is unavailable; retry later"))
                case .success(let stored):
                    var attachments: [FileAttachment] = []
                    for fid in ids {
                        guard let arrived = stored[fid], let row = rows[fid] else {
                            return refuse(.badRequest("file \(fid) was not uploaded: its upload has not finished"))
                        }
                        attachments.append(FileAttachment(fileID: fid, filename: row.filename, contentType: row.contentType, size: arrived.size,
                                                          width: arrived.width, height: arrived.height, sha256: arrived.sha256))
                    }
                    then(attachments)
                }
            }
            work.check(ids, ticket: self.nextTicket)
        }
    }

    /// A send that named `files` was stored or failed: they may be named again (and are refused by their rows if stored).
    func release(_ ids: [UInt64]) { claimed.subtract(ids) }

    /// A worker's answer to check `ticket`.
    func checked(_ ticket: UInt64, _ outcome: FileCheck) {
        checks.removeValue(forKey: ticket)?(outcome)
    }

    /// A removed message's files: their links stop working.
    func forget(_ files: [FileAttachment]) {
        guard !files.isEmpty else { return }
        work?.remove(files.map(\.fileID))
    }
}
