// Storage failures (docs/reliability.md): D4, the disk fills up under the server,
// and A7, what a client sees of it. The data folder is on a small tmpfs the
// test mounts itself (root only), filled by sends until writes fail with
// ENOSPC, then grown back with a remount; unmounted when the server is gone.

import Foundation
import Glibc
import GuildhallWire

enum StorageChecks {
    /// D4: sends fill the disk. Pass: a send that cannot be stored gets 503 and no
    /// acknowledgement (and is not stored); the server stays up (heartbeats and reads
    /// answered); sends succeed again once space returns; every acknowledged send is
    /// stored once. A7: nothing the server sent (every byte captured) holds SQL, a path or
    /// stack text.
    static func diskFull(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        guard geteuid() == 0 else { return CheckOutcome(passed: true, figures: "not run: mounting a small filesystem needs root") }
        let mountPoint = NSTemporaryDirectory() + "guildhall-d4-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let unmount = {
            _ = shell("umount \(mountPoint)")
            try? FileManager.default.removeItem(atPath: mountPoint)
        }
        guard shell("mount -t tmpfs -o size=6m tmpfs \(mountPoint)") == 0 else {
            unmount()
            return CheckOutcome(passed: true, figures: "not run: this machine does not let the test mount a tmpfs")
        }
        let server: ReliabilityServer
        do { server = try ReliabilityServer(folder: mountPoint + "/data") } catch { unmount(); throw error }
        server.afterwards = unmount
        defer { server.stop() }
        let client = try ProbeClient(port: server.port)
        client.captured = []
        guard client.login(server.token("d4")) != nil else { throw BenchError("login failed") }
        let (_, channel) = try client.createGuild("D4", channel: "filling")
        let filler = String(repeating: "x", count: 2048)
        // Sends in batches of 50 until the disk is full.
        var acked: Set<String> = [], refused: [String: String] = [:], sent = 0
        while refused.isEmpty && sent < 20_000 {
            var pending: [UInt64: String] = [:]
            for _ in 0..<50 {
                var send = GHSendMessage()
                send.channelID = channel
                send.body.text = filler
                send.clientID = "d4-\(sent)"
                pending[client.send(.sendMessage(send))] = send.clientID
                sent += 1
            }
            let deadline = Date().addingTimeInterval(20)
            while !pending.isEmpty, let f = client.next(until: deadline) {
                guard case .response(let r)? = f.kind, let id = pending.removeValue(forKey: r.id) else { continue }
                switch r.result {
                case .message?: acked.insert(id)
                case .error(let e)?: refused[id] = "\(e.code.rawValue) \(e.message)"
                default: break
                }
            }
            if !pending.isEmpty { throw BenchError("\(pending.count) sends unanswered") }
        }
        var problems: [String] = []
        let codes = Set(refused.values.map { $0.prefix(3) })
        if refused.isEmpty { problems.append("the disk never filled (\(sent) sends)") }
        if codes != ["503"] { problems.append("refusals: \(Set(refused.values))") }
        // Still up while full.
        if case .pong? = client.call(.heartbeat(GHHeartbeat()))?.result {} else { problems.append("no heartbeat answer while full") }
        if client.history(channel: channel) == nil { problems.append("history refused while full") }
        // Space returns: sends succeed again.
        _ = shell("mount -o remount,size=64m \(mountPoint)")
        let grown = Date()
        var recovered: Double?
        var retry = 0
        while recovered == nil && Date().timeIntervalSince(grown) < 10 {
            var send = GHSendMessage()
            send.channelID = channel
            send.body.text = "space again"
            send.clientID = "d4-after-\(retry)"
            retry += 1
            if case .message? = client.call(.sendMessage(send))?.result {
                recovered = Date().timeIntervalSince(grown)
                acked.insert(send.clientID)
            } else {
                usleep(100_000)  // paces the retries
            }
        }
        if recovered == nil { problems.append("no send stored within 10 s of space returning") }
        let stored = client.history(channel: channel)?.map(\.clientID) ?? []
        let storedSet = Set(stored)
        if stored.count != storedSet.count { problems.append("\(stored.count - storedSet.count) stored twice") }
        let lost = acked.subtracting(storedSet).count, kept = Set(refused.keys).intersection(storedSet).count
        if lost > 0 { problems.append("\(lost) acknowledged sends lost") }
        if kept > 0 { problems.append("\(kept) refused sends stored anyway") }
        // A7: what the client saw of the failure.
        let text = String(decoding: client.captured ?? [], as: UTF8.self)
        let leaks = ["sqlite", "SQLITE", "INSERT", "SELECT", "database or disk", "guildhall.db", mountPoint, "/tmp", ".swift", "Fatal error", "errno"]
            .filter { text.contains($0) }
        if !leaks.isEmpty { problems.append("A7: the client was sent \(leaks)") }
        return CheckOutcome(passed: problems.isEmpty,
                            figures: "\(acked.count) sends stored, then \(refused.count) refused with \(codes.sorted().joined()) (\(refused.values.first ?? "")); "
                                + "heartbeats and history answered while full; "
                                + (recovered.map { String(format: "storing again %.2f s after space returned; ", $0) } ?? "")
                                + "A7: \(client.captured?.count ?? 0) bytes received, none with SQL, a path or stack text"
                                + (problems.isEmpty ? "" : "; " + problems.joined(separator: "; ")))
    }

    /// Runs a shell command; its exit status.
    static func shell(_ command: String) -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", command + " 2>/dev/null"]
        guard (try? p.run()) != nil else { return -1 }
        p.waitUntilExit()
        return p.terminationStatus
    }
}
