// One TLS connection's state machine over memory BIOs (OpenSSL 3): bytes
// from the network go in, plaintext comes out; plaintext goes in, bytes for
// the network come out. No socket: TCPConnection moves the bytes on its
// loop, and the tests drive two of these against each other. A plaintext
// written before the handshake finished waits for it. One loop at a time
// uses a stream (a resume hands it to another loop with its connection).

import COpenSSL
import Glibc

public final class TLSStream: @unchecked Sendable {
    private let ssl: OpaquePointer
    /// Network to OpenSSL, and OpenSSL to network (both owned by `ssl`).
    private let input: OpaquePointer
    private let output: OpaquePointer
    public private(set) var handshakeDone = false
    /// The peer sent its close_notify.
    public private(set) var peerClosed = false
    private var held: [UInt8] = []

    /// A stream of `context`'s side; a client names the host it expects (SNI, and the certificate's name).
    public init(context: TLSContext, host: String? = nil) throws(TLSError) {
        guard let ssl = SSL_new(context.ctx), let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            throw TLSError("cannot make a TLS connection")
        }
        self.ssl = ssl
        self.input = input
        self.output = output
        SSL_set_bio(ssl, input, output)
        if context.isServer {
            SSL_set_accept_state(ssl)
        } else {
            if let host {
                // An address is checked against the certificate's IP names, and is no server name to send (RFC 6066).
                var v4 = in_addr(), v6 = in6_addr()
                if inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 {
                    guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 else { throw TLSError("cannot expect the address \(host)") }
                } else {
                    _ = gh_ssl_set_tlsext_host_name(ssl, host)
                    guard SSL_set1_host(ssl, host) == 1 else { throw TLSError("cannot expect the host name \(host)") }
                }
            }
            SSL_set_connect_state(ssl)
        }
    }

    deinit { SSL_free(ssl) }

    /// Starts a client's handshake (its first bytes are then in `outgoing`).
    public func start() throws(TLSError) { try advanceHandshake() }

    /// Bytes from the network; decrypted plaintext is appended to `plain`.
    /// Throws when the peer broke TLS (or its certificate does not verify).
    public func receive(_ bytes: UnsafeRawBufferPointer, into plain: inout [UInt8]) throws(TLSError) {
        var offset = 0
        while offset < bytes.count {
            let n = BIO_write(input, bytes.baseAddress! + offset, Int32(min(bytes.count - offset, Int(Int32.max))))
            guard n > 0 else { throw TLSError("cannot buffer TLS input") }
            offset += Int(n)
        }
        if !handshakeDone {
            try advanceHandshake()
            guard handshakeDone else { return }
        }
        try readPlaintext(into: &plain)
    }

    private func advanceHandshake() throws(TLSError) {
        let rc = SSL_do_handshake(ssl)
        if rc == 1 {
            handshakeDone = true
            if !held.isEmpty {
                let waiting = held
                held = []
                try sendNow(waiting)
            }
            return
        }
        let error = SSL_get_error(ssl, rc)
        guard error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE else {
            throw TLSError(verifyFailure() ?? "the TLS handshake failed")
        }
    }

    private func readPlaintext(into plain: inout [UInt8]) throws(TLSError) {
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let n = chunk.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if n > 0 {
                plain += chunk[0..<Int(n)]
                continue
            }
            switch SSL_get_error(ssl, n) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return
            case SSL_ERROR_ZERO_RETURN:
                peerClosed = true
                return
            default: throw TLSError("the TLS stream broke")
            }
        }
    }

    /// The certificate check's verdict, when it failed.
    private func verifyFailure() -> String? {
        let result = SSL_get_verify_result(ssl)
        guard result != X509_V_OK else { return nil }
        return "the certificate does not verify: " + String(cString: X509_verify_cert_error_string(result))
    }

    /// Plaintext to send: encrypted into `outgoing`, or held until the handshake is done.
    public func send(_ bytes: UnsafeRawBufferPointer) throws(TLSError) {
        guard !bytes.isEmpty else { return }
        guard handshakeDone else {
            held += bytes
            return
        }
        var offset = 0
        while offset < bytes.count {
            let n = SSL_write(ssl, bytes.baseAddress! + offset, Int32(min(bytes.count - offset, 1 << 30)))
            guard n > 0 else { throw TLSError("cannot encrypt") }
            offset += Int(n)
        }
    }

    private func sendNow(_ bytes: [UInt8]) throws(TLSError) {
        var failure: TLSError?
        bytes.withUnsafeBytes { b in
            do throws(TLSError) { try send(b) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Whether bytes wait to go to the network.
    public var hasOutgoing: Bool { gh_bio_pending(output) > 0 }

    /// The bytes for the network (handshake records, encrypted data, alerts), taken.
    public func outgoing() -> [UInt8] {
        let pending = Int(gh_bio_pending(output))
        guard pending > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: pending)
        let n = out.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32($0.count)) }
        return n > 0 ? Array(out.prefix(Int(n))) : []
    }

    /// Says goodbye (close_notify, in `outgoing`).
    public func shutdown() {
        guard handshakeDone else { return }
        _ = SSL_shutdown(ssl)
    }
}
