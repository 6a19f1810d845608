// One blocking connection to the cluster's NATS servers with a JetStream
// context (docs/cluster.md): the lease thread and the store's writer thread each
// hold one. cnats' JetStream and KV calls block, so neither is ever used on
// a loop. Calls fail within `waitMs` rather than JetStream's default five
// seconds, so a lease round or a commit round stays short.

import CNATS
import Foundation

final class ClusterConnection: @unchecked Sendable {  // its thread's alone after init; cnats connections are thread-safe
    private(set) var connection: OpaquePointer?
    private(set) var jetStream: OpaquePointer?

    init(settings: Settings, role: String, waitMs: Int64 = 1_000) throws {
        var opts: OpaquePointer?
        guard natsOptions_Create(&opts) == NATS_OK else { throw SettingsError(description: "cannot make NATS options") }
        defer { natsOptions_Destroy(opts) }
        let urls = settings.cluster.split(separator: ",").map { strdup(String($0)) }
        defer { urls.forEach { free($0) } }
        var pointers: [UnsafePointer<CChar>?] = urls.map { UnsafePointer($0) }
        _ = natsOptions_SetServers(opts, &pointers, Int32(pointers.count))
        _ = natsOptions_SetName(opts, "guildhall-\(settings.nodeID)-\(role)")
        _ = natsOptions_SetTimeout(opts, 2_000)
        _ = natsOptions_SetMaxReconnect(opts, -1)
        var s = natsConnection_Connect(&connection, opts)
        guard s == NATS_OK else { throw SettingsError(description: "cannot reach NATS at \(settings.cluster): \(Self.text(s))") }
        var jsOpts = jsOptions()
        jsOptions_Init(&jsOpts)
        jsOpts.Wait = waitMs
        s = natsConnection_JetStream(&jetStream, connection, &jsOpts)
        guard s == NATS_OK else {
            close()
            throw SettingsError(description: "no JetStream: \(Self.text(s))")
        }
    }

    var isConnected: Bool { connection.map { natsConnection_Status($0) == NATS_CONN_STATUS_CONNECTED } ?? false }

    func close() {
        if let jetStream { jsCtx_Destroy(jetStream) }
        if let connection { natsConnection_Destroy(connection) }
        jetStream = nil; connection = nil
    }

    static func text(_ s: natsStatus) -> String { natsStatus_GetText(s).map { String(cString: $0) } ?? "status \(s.rawValue)" }

    static func lastErrorText() -> String { nats_GetLastError(nil).map { String(cString: $0) } ?? "" }
}
