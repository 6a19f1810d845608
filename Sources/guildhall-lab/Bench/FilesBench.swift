// `guildhall-lab bench files` (docs/performance.md "Files"): the local
// store's throughput and its cost to chat. First, C clients upload F files
// of B bytes (CreateUpload through the SDK, then the bytes PUT over HTTP, as
// the SDK's upload does), each file is sent in a message, and the C clients
// download every file by the link its message gave: files and MiB per
// second each way. Then shape A (1000 subscribers, 1 publisher, 100-byte
// messages at full rate) runs R times alone and R times while 10 clients
// upload files (each at --upload-rate files a second, or back to back),
// alternating: the ratio of deliveries per second is the uploads' cost to
// the fan-out. Every upload carries the same
// bytes, so the store keeps one blob however many there are (each is still
// written, hashed and synced as it arrives).

import ArgumentParser
import Foundation
import GuildhallClient
import GuildhallCore
import GuildhallServer
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct FilesBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "files", abstract: "Uploads and downloads per second through the local store, and their cost to shape A.")

    @Option(help: "Files uploaded and downloaded for the throughput.") var files = 200
    @Option(help: "Clients uploading (and downloading) at once.") var clients = 10
    @Option(help: "Bytes per file.") var bytes = 1 << 20
    @Option(help: "Runs of shape A each way (alone, and with uploads), alternating; the medians are compared.") var runs = 3
    @Option(help: "Messages the publisher sends in each shape A run.") var messages = 10_000
    @Option(help: "Files a second each uploader sends beside shape A (0: back to back).") var uploadRate = 1.0
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        guard files >= clients, clients >= 1, bytes >= 1 else { throw ValidationError("at least one file per client") }
        let body = Data((0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        if !json { print("bench files: \(files) files of \(bytes) bytes by \(clients) clients; shape A \(runs)× alone and \(runs)× beside \(clients) uploaders") }

        // Throughput.
        let ws = try BenchTargets.freePort()
        let server = try BenchTargets.start(.guildhall, members: clients + 2, extraSettings: Self.fileSettings(ws))
        defer { server.stop() }
        let users = (0..<clients).map { "m\($0)" }
        let sessions = try await Self.connect(users, port: server.port)
        defer { for c in sessions { c.close() } }
        let cpuBefore = server.cpuSeconds
        let upStart = Date()
        let uploaded = try await withThrowingTaskGroup(of: (Int, [UInt64]).self) { group in
            for (i, c) in sessions.enumerated() {
                group.addTask {
                    var ids: [UInt64] = []
                    for n in stride(from: i, to: files, by: clients) { ids.append(try await c.files.upload(body, as: "f\(n).bin", to: .channel(BenchTargets.channelID))) }
                    return (i, ids)
                }
            }
            // Each client's files, in the clients' order: a client sends its own.
            return try await group.reduce(into: [[UInt64]](repeating: [], count: clients)) { $0[$1.0] = $1.1 }
        }
        let upSeconds = Date().timeIntervalSince(upStart), upCores = (server.cpuSeconds - cpuBefore) / upSeconds
        // Each client sends its files, one a message; the answers hold the links.
        var links: [[String]] = []
        for (c, ids) in zip(sessions, uploaded) {
            var mine: [String] = []
            for id in ids { mine.append(try await c.messages.send("", to: BenchTargets.channelID, attachments: [id]).attachments[0].url) }
            links.append(mine)
        }
        let downCPU = server.cpuSeconds
        let downStart = Date()
        let received = try await withThrowingTaskGroup(of: Int.self) { group in
            for mine in links {
                group.addTask {
                    var total = 0
                    for link in mine {
                        let (data, response) = try await URLSession.shared.data(from: URL(string: link)!)
                        guard (response as? HTTPURLResponse)?.statusCode == 200, data.count == bytes else { throw ValidationError("a download failed: \(link)") }
                        total += data.count
                    }
                    return total
                }
            }
            return try await group.reduce(0, +)
        }
        let downSeconds = Date().timeIntervalSince(downStart), downCores = (server.cpuSeconds - downCPU) / downSeconds
        guard received == files * bytes else { throw ValidationError("downloaded \(received) bytes of \(files * bytes)") }
        let mib = Double(bytes) / 1_048_576

        // Shape A alone and beside uploads, alternating.
        var a0 = LoadShape()
        a0.messages = messages
        let shape = a0
        var alone: [BenchRun] = [], beside: [BenchRun] = []
        let uploads = Uploaders.Tally()
        for round in 0..<runs {
            for withUploads in round % 2 == 0 ? [false, true] : [true, false] {
                let port = try BenchTargets.freePort()
                let run = try await Self.onThread {
                    try BenchRunner.run(.guildhall, shape: shape, members: shape.subscribers + shape.publishers + 1 + clients,
                                        settings: Self.fileSettings(port), alongside: withUploads ? { target in
                        Uploaders.start(users: (0..<clients).map { "m\(shape.subscribers + $0)" }, port: target.port, body: body,
                                        rate: uploadRate, counted: uploads)
                    } : nil)
                }
                if let failure = run.result.failure { throw ValidationError("shape A failed: \(failure)") }
                if withUploads { beside.append(run) } else { alone.append(run) }
            }
        }
        let a = BenchRunner.median(alone), b = BenchRunner.median(beside)
        let ratio = b.result.deliveriesPerSecond / max(a.result.deliveriesPerSecond, 1)
        let uploadsDuring = Double(uploads.count.load(ordering: .relaxed)) / Double(runs)
        if json {
            print("{\"bench\":\"files\",\"files\":\(files),\"bytes\":\(bytes),\"clients\":\(clients),\"uploads_per_s\":\(Double(files) / upSeconds),"
                  + "\"upload_mib_per_s\":\(Double(files) * mib / upSeconds),\"upload_server_cores\":\(upCores),\"downloads_per_s\":\(Double(files) / downSeconds),"
                  + "\"download_mib_per_s\":\(Double(files) * mib / downSeconds),\"download_server_cores\":\(downCores),"
                  + "\"shape_a_alone\":\(a.json()),\"shape_a_with_uploads\":\(b.json()),\"uploads_per_run\":\(uploadsDuring),\"ratio\":\(ratio)}")
            return
        }
        print(String(format: "uploads:   %.1f files/s, %.1f MiB/s (server %.2f cores)", Double(files) / upSeconds, Double(files) * mib / upSeconds, upCores))
        print(String(format: "downloads: %.1f files/s, %.1f MiB/s (server %.2f cores)", Double(files) / downSeconds, Double(files) * mib / downSeconds, downCores))
        print("shape A alone:        " + BenchRunner.describe(a))
        print("shape A with uploads: " + BenchRunner.describe(b))
        print(String(format: "ratio with/alone: %.2f× deliveries/s (%.0f uploads during each run, %@)", ratio, uploadsDuring,
                     uploadRate > 0 ? String(format: "%.1f a second per uploader", uploadRate) : "back to back"))
    }

    /// The WebSocket listener on `port`, links to it, and no quota in the way.
    static func fileSettings(_ port: Int) -> [String] {
        ["ws-listen=127.0.0.1:\(port)", "files-url=http://127.0.0.1:\(port)", "file-quota-bytes=\(1 << 50)"]
    }

    static func connect(_ users: [String], port: Int) async throws -> [GuildhallClient] {
        var out: [GuildhallClient] = []
        for (i, user) in users.enumerated() {
            let token = AccessToken(user: user, device: "files\(i)", expiry: systemClock() / 1000 + 3600).signed(with: Array(BenchTargets.secret.utf8))
            let c = GuildhallClient(port: port, options: ClientOptions(token: token))
            try await c.connect()
            out.append(c)
        }
        return out
    }

    /// Runs `body` on a thread of its own (the load generator blocks; the uploaders need the concurrency pool).
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
}

/// Clients uploading files back to back until stopped.
final class Uploaders: Sendable {
    /// Uploads done, over every start.
    final class Tally: Sendable { let count = Atomic<Int>(0) }

    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let count: Int

    private init(count: Int) { self.count = count }

    /// Connects `users` to the server on `port` (waiting until they are in), then starts them
    /// uploading `body` to the bench channel; returns how to stop them (it waits for them).
    static func start(users: [String], port: Int, body: Data, rate: Double, counted tally: Tally) -> () -> Void {
        let u = Uploaders(count: users.count)
        let connected = DispatchSemaphore(value: 0)
        let start = Date().addingTimeInterval(0.05 * Double(users.count) + 0.5)
        for (i, user) in users.enumerated() {
            Task.detached {
                defer { u.finished.signal() }
                let c = try? await FilesBench.connect([user], port: port).first
                connected.signal()
                guard let c else { return }
                defer { c.close() }
                var n = 0
                while !u.stopping.load(ordering: .relaxed) {
                    // Paced: each upload at its slot, the uploaders' slots spread over each period.
                    if rate > 0 {
                        let next = start.addingTimeInterval((Double(n) + Double(i) / Double(users.count)) / rate)
                        while Date() < next, !u.stopping.load(ordering: .relaxed) { try? await Task.sleep(nanoseconds: 20_000_000) }
                        if u.stopping.load(ordering: .relaxed) { break }
                    }
                    guard (try? await c.files.upload(body, as: "u\(i)-\(n).bin", to: .channel(BenchTargets.channelID))) != nil else { break }
                    n += 1
                    tally.count.add(1, ordering: .relaxed)
                }
            }
        }
        for _ in users { connected.wait() }
        // The load's clock starts once this returns: the uploads' slots begin with it.
        return {
            u.stopping.store(true, ordering: .relaxed)
            for _ in 0..<u.count { u.finished.wait() }
        }
    }
}
