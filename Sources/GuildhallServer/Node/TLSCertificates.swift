// The node's TLS certificate (docs/security.md): the chain and key that
// `tls-cert-file` and `tls-key-file` name, read at start (a node told to
// speak TLS without them does not start), again on SIGHUP and on POST
// /tls/reload. A reload that fails keeps the certificate in use; a new one
// serves the connections made after it, and sessions already connected
// stay. Which listeners speak TLS is `tls-client`, `tls-websocket` and
// `tls-admin`. Any thread.

import GuildhallLoop
import GuildhallTLS
import Synchronization

final class TLSCertificates: Sendable {
    private let context = Mutex<TLSContext?>(nil)

    /// Reads the certificate `settings` names, when a listener speaks TLS.
    func load(_ settings: Settings) throws(SettingsError) {
        guard settings.speaksTLS else { return context.withLock { $0 = nil } }
        guard !settings.tlsCertFile.isEmpty, !settings.tlsKeyFile.isEmpty else {
            throw SettingsError(description: "a listener speaks TLS (tls-client, tls-websocket or tls-admin): set tls-cert-file and tls-key-file")
        }
        do {
            let loaded = try TLSContext.server(certificateChain: settings.tlsCertFile, privateKey: settings.tlsKeyFile)
            context.withLock { $0 = loaded }
        } catch {
            throw SettingsError(description: "TLS: \(error.description)")
        }
    }

    /// A new connection's TLS, when the certificate is loaded.
    func stream() -> TLSStream? {
        guard let context = context.withLock({ $0 }) else { return nil }
        return try? TLSStream(context: context)
    }
}

extension Settings {
    /// Whether any listener speaks TLS.
    var speaksTLS: Bool { tlsClient == "on" || tlsWebSocket == "on" || tlsAdmin == "on" }
}
