/* Credential source: what the transport puts on each request. A static token, a token file
 * re-read at least every minute and after a 401 (client-go's cached file token source), or an
 * exec credential plugin run with uv_spawn (never blocking the loop) whose ExecCredential is
 * cached until its expirationTimestamp. Client certificates from the kubeconfig are static
 * and live in tj_kube_config; a plugin may supply its own. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "kube/config.h"

/* client-go re-reads the token file when its cached copy is older than a minute. */
#define TJ_TOKEN_FILE_REFRESH_MS 60000
/* An exec credential is renewed this long before it expires. */
#define TJ_EXEC_EXPIRY_LEEWAY_MS 10000
/* Limit of a plugin's stdout. */
#define TJ_EXEC_OUTPUT_MAX (1u << 20)

/* The credential to use for one request. Borrowed from the source; valid until the next call
 * into it. */
struct tj_credential {
	const char *token;           /* bearer token, NULL if none */
	const char *client_cert_pem; /* NULL: use the kubeconfig's (if any) */
	size_t client_cert_pem_len;
	const char *client_key_pem;
	size_t client_key_pem_len;
};

/* The status of a client.authentication.k8s.io ExecCredential. */
struct tj_exec_credential {
	char *token;             /* owned; NULL if absent */
	char *client_cert_pem;   /* owned; clientCertificateData, NULL if absent */
	char *client_key_pem;    /* owned; clientKeyData, NULL if absent */
	int64_t expires_unix_ms; /* expirationTimestamp, 0 = never expires */
};

/* Parses a plugin's output. Requires kind ExecCredential, an apiVersion equal to want_api_version,
 * and a status with a token or both clientCertificateData and clientKeyData. On error returns
 * -EINVAL with a message in err. Pure. */
int tj_exec_credential_parse(const char *json, size_t len, const char *want_api_version,
                             struct tj_exec_credential *ret, char *err, size_t errlen);

void tj_exec_credential_clear(struct tj_exec_credential *c);

struct tj_credentials;

/* Called when a credential is available (rc 0) or cannot be had (rc < 0, message in error). */
typedef void (*tj_credentials_fn)(int rc, const struct tj_credential *cred, const char *error,
                                  void *userdata);

/* Creates the source for cfg (copies what it needs). */
int tj_credentials_new(uv_loop_t *loop, const struct tj_kube_config *cfg,
                       struct tj_credentials **ret);

/* Gets the current credential. If it is at hand (static, fresh token file, unexpired exec
 * credential) the callback runs before this returns; otherwise (plugin to run) it runs later,
 * and concurrent waiters share one plugin run. Returns 0, or a negative errno if the callback
 * will not be called. */
int tj_credentials_get(struct tj_credentials *c, tj_credentials_fn fn, void *userdata);

/* Cancels a pending get (no callback). */
void tj_credentials_cancel(struct tj_credentials *c, tj_credentials_fn fn, void *userdata);

/* A request was answered 401: forget the cached token or exec credential so that the next get
 * re-reads the file or re-runs the plugin. Returns true if that can yield a different
 * credential (worth one retry), false for a static token. */
bool tj_credentials_invalidate(struct tj_credentials *c);

/* Kills a running plugin and closes handles; memory is freed from the close callbacks. Accepts
 * NULL; returns NULL. */
struct tj_credentials *tj_credentials_free(struct tj_credentials *c);
