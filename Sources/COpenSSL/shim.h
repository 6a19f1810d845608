// OpenSSL 3 (Debian libssl-dev) for TLS over libuv through memory BIOs
// (GuildhallLoop/TLS). The macros Swift cannot call are wrapped as functions.
#ifndef GUILDHALL_COPENSSL_SHIM_H
#define GUILDHALL_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/bio.h>
#include <openssl/x509v3.h>

static inline int gh_ssl_ctx_set_tls12_to_13(SSL_CTX *ctx) {
    return SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) && SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
}
static inline long gh_ssl_ctx_set_options(SSL_CTX *ctx, long options) { return SSL_CTX_set_options(ctx, options); }
static inline long gh_ssl_ctx_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
static inline long gh_bio_pending(BIO *bio) { return (long)BIO_ctrl_pending(bio); }
static inline int gh_ssl_set_tlsext_host_name(SSL *ssl, const char *name) { return (int)SSL_set_tlsext_host_name(ssl, name); }
static inline long gh_no_renegotiation(void) { return SSL_OP_NO_RENEGOTIATION; }
static inline long gh_accept_moving_write_buffer(void) { return SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER; }
static inline long gh_enable_partial_write(void) { return SSL_MODE_ENABLE_PARTIAL_WRITE; }
static inline long gh_release_buffers(void) { return SSL_MODE_RELEASE_BUFFERS; }
#endif
