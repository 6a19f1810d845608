// Sending files (docs/files.md "Sending files"): what a send's file ids
// name, checked before the message is stored. Each must be a row of the
// sender's uploads to this channel or conversation that no message carries
// yet, and its bytes must have arrived (the file store is asked on a
// worker). While a send naming a file is under way the file is claimed here,
// so that two sends cannot both carry it; the claim ends when that send is
// stored (the file's row names the message from then on) or is not. When a
// message is removed its files are forgotten in the store, which is what
// makes every link made for them stop working.
//
// The sweep, every file-sweep-seconds: the rows of this home's uploads that
// no message carried within file-grace-seconds (avatars its users' profiles
// do not name, icons their servers' do not), and of removed messages' files, are forgotten in the store first and then deleted (a row outlives
// its file, never the other way, so a failed removal is found again); the
// first loop's home also has the store remove bytes no file names. A file a
// send has claimed is left alone. Loop thread only.

import GuildhallCore
import GuildhallFiles
import GuildhallLoop
import GuildhallStore

final class Attachments: HomePart {
    unowned let services: HomeServices
    /// What the sweep asks before a file goes: whether its conversation or its uploader's profile still holds it.
    unowned let userHome: UserHome
    private unowned let profiles: Profiles
    /// The file store's worker (nil: this node keeps no files).
    var work: FileWork?
    /// Files named by a send under way.
    private var claimed = Set<UInt64>()
    /// Work asked of a worker, by ticket.
    private var waiting: [UInt64: (FileWorkOutcome) -> Void] = [:]
    private var nextTicket: UInt64 = 0
    private var sweepTimer: LoopTimer?
    /// Loop time of the last sweep's start, and whether one is under way.
    private var lastSweep: UInt64 = 0, sweeping = false
    /// How many rows one sweep takes at most.
    static let sweepBatch = 500

    init(services: HomeServices, userHome: UserHome, profiles: Profiles) {
        self.services = services
        self.userHome = userHome
        self.profiles = profiles
    }

    /// Starts the sweep's timer (a look each second; a sweep each file-sweep-seconds).
    func startSweeping(on loop: EventLoop) {
        lastSweep = loop.nowMillis
        let timer = LoopTimer(loop: loop)
        timer.start(afterMillis: 1000, repeatMillis: 1000) { [unowned self] in
            guard work != nil, !sweeping, loop.nowMillis >= lastSweep + UInt64(settings.fileSweepSeconds) * 1000 else { return }
            lastSweep = loop.nowMillis
            sweep()
        }
        sweepTimer = timer
    }

    func close() { sweepTimer?.close() }

    private func ask(_ then: @escaping (FileWorkOutcome) -> Void) -> UInt64 {
        nextTicket += 1
        waiting[nextTicket] = then
        return nextTicket
    }

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
            let ticket = self.ask { outcome in
                switch outcome {
                case .checked(.failure), .removed: refuse(Failure(.unavailable, "the file store is unavailable; retry later"))
                case .checked(.success(let stored)):
                    var attachments: [FileAttachment] = []
                    for fid in ids {
                        guard let arrived = stored[fid], let row = rows[fid] else {
                            return refuse(.badRequest("file \(fid) was not uploaded: its upload has not finished"))
                        }
                        attachments.append(FileAttachment(fileID: fid, filename: row.filename, contentType: row.contentType, size: arrived.size,
                                                          width: arrived.width, height: arrived.height,
                                                          sha256: arrived.sha256.isEmpty ? row.sha256 : arrived.sha256))
                    }
                    then(attachments)
                }
            }
            work.check(ids, ticket: ticket)
        }
    }

    /// A send that named `files` was stored or failed: they may be named again (and are refused by their rows if stored).
    func release(_ ids: [UInt64]) { if !ids.isEmpty { claimed.subtract(ids) } }

    /// A worker's answer to `ticket`.
    func done(_ ticket: UInt64, _ outcome: FileWorkOutcome) {
        waiting.removeValue(forKey: ticket)?(outcome)
    }

    /// One sweep (see the header).
    func sweep() {
        guard let work else { return }
        sweeping = true
        if services.index == 0 {
            read(.fileTotals) { totals in
                if totals.error == nil { self.services.metrics.filesStored(count: totals.count, bytes: totals.bytes) }
            }
        }
        let graceMs = UInt64(settings.fileGraceSeconds) * 1000, now = now()
        read(.sweepableFiles(unsentBefore: now > graceMs ? now - graceMs : 0, limit: Self.sweepBatch)) { found in
            // Another home's rows (the store is the node's) are its own to sweep.
            let mine = found.files.filter { f in
                !self.claimed.contains(f.id) && (f.serverID != 0 && f.channelID == 0 ? self.isUnusedIcon(f)
                    : f.serverID != 0 ? self.directory.server(f.serverID) != nil
                    : f.channelID != 0 ? self.userHome.directs[f.channelID] != nil : self.profiles.isUnusedAvatar(f))
            }
            let ticket = self.ask { outcome in
                guard case .removed(let ids, let blobs) = outcome else { return self.sweeping = false }
                let swept = Set(ids)
                let rows = mine.filter { swept.contains($0.id) }
                guard !rows.isEmpty || blobs > 0 else { return self.sweeping = false }
                self.services.metrics.filesSwept(unsent: rows.filter { !$0.removed }.count, removed: rows.filter(\.removed).count, blobs: blobs)
                self.commit(rows.map { .fileSwept($0.id, serverID: $0.serverID, channelID: $0.channelID) }, from: nil) { _ in self.sweeping = false }
            }
            work.sweep(mine.map(\.id), blobGraceSeconds: self.services.index == 0 ? self.settings.fileGraceSeconds : nil, ticket: ticket)
        }
    }

    /// Whether `file` is an icon upload of a server homed here that its icon no longer (or never) names.
    private func isUnusedIcon(_ file: FileRecord) -> Bool {
        guard let server = directory.server(file.serverID) else { return false }
        return !server.icon.contains("\(DownloadLink.pathPrefix)\(file.id)/")
    }

    /// A removed message's files: their links stop working.
    func forget(_ files: [FileAttachment]) {
        guard !files.isEmpty else { return }
        work?.remove(files.map(\.fileID))
    }
}
