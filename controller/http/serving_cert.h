/* The certificate the metrics server presents: read from a certificate and key file (a
 * kubernetes.io/tls Secret mounted as tls.crt and tls.key) and read again when they change,
 * or made up at start, self-signed, when none is given (as controller-runtime's metrics
 * server does). GnuTLS types, because libmicrohttpd speaks TLS through GnuTLS. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <uv.h>

/* Largest certificate chain or key file read (a chain of a few certificates fits). */
#define TJ_SERVING_CERT_MAX_FILE (256 * 1024)
/* How often the files are checked for a change (controller-runtime's certwatcher polls
 * every 10 s besides its inotify watch; a mounted Secret changes by a symlink swap that
 * polling sees as well). */
#define TJ_SERVING_CERT_POLL_MS 10000

/* A self-signed ECDSA P-256 certificate for names (DNS names; "127.0.0.1" and "::1" become
 * IP addresses), valid from now_s - 1 hour for a year, as PEM texts (both owned by the
 * caller). -EINVAL for no names, -EIO when GnuTLS fails. */
int tj_serving_cert_self_signed(const char *const *names, size_t n_names, int64_t now_s,
                                char **ret_cert_pem, char **ret_key_pem);

struct tj_serving_cert;

/* From PEM texts: the chain (leaf first) and its key; -EBADMSG when they do not parse or the
 * key is not the leaf's. err gets a line for a person. */
int tj_serving_cert_from_pem(const char *cert_pem, size_t cert_len, const char *key_pem,
                             size_t key_len, struct tj_serving_cert **ret, char *err,
                             size_t errlen);

/* From files, checked every poll_ms on loop: a change that parses replaces the certificate
 * for the next handshakes; one that does not is logged and the previous certificate kept. */
int tj_serving_cert_watch(uv_loop_t *loop, const char *cert_path, const char *key_path,
                          uint64_t poll_ms, struct tj_serving_cert **ret, char *err, size_t errlen);

/* The chain and key to present now, as GnuTLS's certificate retrieve callback returns them.
 * They stay valid until tj_serving_cert_free, also after a reload (a handshake in flight
 * may still use them). */
void tj_serving_cert_current(const struct tj_serving_cert *c, gnutls_pcert_st **ret_chain,
                             unsigned *ret_len, gnutls_privkey_t *ret_key);

/* Stops watching and frees everything once the watch timer has closed (the loop must run on
 * for that). Accepts NULL. */
void tj_serving_cert_free(struct tj_serving_cert *c);
