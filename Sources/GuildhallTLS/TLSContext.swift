// TLS configuration with OpenSSL 3 (docs/security.md): a server's
// certificate chain and key from PEM files, TLS 1.2 and 1.3 only, OpenSSL's
// default cipher suites; or a client's trust (a CA file, or the system's)
// with verification on. An SSL_CTX is safe to share between threads for
// making connections; a reload makes a new one, and connections made
// before keep theirs. Any thread.

import COpenSSL

public struct TLSError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ what: String) {
        // OpenSSL's own reason, when it left one.
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &text, text.count)
            reasons.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        description = reasons.isEmpty ? what : "\(what): \(reasons.joined(separator: "; "))"
    }
}

public final class TLSContext: @unchecked Sendable {
    let ctx: OpaquePointer
    public let isServer: Bool

    private init(_ ctx: OpaquePointer, server: Bool) throws(TLSError) {
        self.ctx = ctx
        isServer = server
        guard gh_ssl_ctx_set_tls12_to_13(ctx) == 1 else { throw TLSError("cannot limit TLS to versions 1.2 and 1.3") }
        _ = gh_ssl_ctx_set_options(ctx, gh_no_renegotiation())
        // Memory BIOs: a write may be retried from another buffer, and the buffers go back when idle.
        _ = gh_ssl_ctx_set_mode(ctx, gh_accept_moving_write_buffer() | gh_release_buffers())
    }

    deinit { SSL_CTX_free(ctx) }

    /// A server's: the certificate chain (leaf first) and its private key, both PEM.
    public static func server(certificateChain: String, privateKey: String) throws(TLSError) -> TLSContext {
        guard let ctx = SSL_CTX_new(TLS_server_method()) else { throw TLSError("cannot make a TLS context") }
        let context = try TLSContext(ctx, server: true)
        guard SSL_CTX_use_certificate_chain_file(ctx, certificateChain) == 1 else {
            throw TLSError("cannot read the certificate chain \(certificateChain)")
        }
        guard SSL_CTX_use_PrivateKey_file(ctx, privateKey, SSL_FILETYPE_PEM) == 1 else {
            throw TLSError("cannot read the private key \(privateKey)")
        }
        guard SSL_CTX_check_private_key(ctx) == 1 else { throw TLSError("the private key \(privateKey) is not the certificate's") }
        return context
    }

    /// A client's: trusts the CA certificates in `caFile` (PEM), or the
    /// system's when nil; with `verify` the server's certificate must chain to
    /// one of them, be valid now, and name the host connected to.
    public static func client(caFile: String? = nil, verify: Bool = true) throws(TLSError) -> TLSContext {
        guard let ctx = SSL_CTX_new(TLS_client_method()) else { throw TLSError("cannot make a TLS context") }
        let context = try TLSContext(ctx, server: false)
        if let caFile {
            guard SSL_CTX_load_verify_locations(ctx, caFile, nil) == 1 else { throw TLSError("cannot read the CA file \(caFile)") }
        } else {
            guard SSL_CTX_set_default_verify_paths(ctx) == 1 else { throw TLSError("cannot read the system's CA certificates") }
        }
        SSL_CTX_set_verify(ctx, verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nil)
        return context
    }
}
