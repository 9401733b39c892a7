#ifndef HAPPY_CTLS_SHIM_H
#define HAPPY_CTLS_SHIM_H

/* OpenSSL's TLS client, for happyclient's HTTP requests over https. */

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

/* SSL_set_tlsext_host_name is a macro: the server name sent in the handshake (SNI). */
static inline int happy_tls_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/* SSL_OP_IGNORE_UNEXPECTED_EOF is built by a macro Swift cannot import: a server that closes
 * without TLS's close_notify ends the answer rather than failing it. */
static const uint64_t happy_tls_ignore_unexpected_eof = SSL_OP_IGNORE_UNEXPECTED_EOF;

#endif
