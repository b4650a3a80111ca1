#include "controller/http/serving_cert.h"
#include "controller/http/serving_cert_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gnutls/crypto.h>
#include <gnutls/x509.h>

#include "base/fileio.h"
#include "controller/log/log.h"

/* Certificates of a chain read from one file; a leaf, intermediates, rarely more. */
#define MAX_CHAIN 8

/* One certificate and key as read at one time. A reload adds a generation and keeps the
 * older ones, since GnuTLS does not copy what the retrieve callback hands it; a Secret is
 * rotated every few weeks, so a pod holds a handful at most. */
struct generation {
	gnutls_pcert_st chain[MAX_CHAIN]; /* owned, n of them */
	unsigned n;
	gnutls_privkey_t key;     /* owned */
	struct generation *older; /* owned */
};

/* What identifies the content of a file for the poll: a mounted Secret changes by a
 * symlink swap, which changes the inode that stat (following links) reports. */
struct file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

struct tj_serving_cert {
	struct generation *current; /* owned, with the older generations */
	unsigned generation;
	bool watching;
	uv_timer_t timer;
	char *cert_path, *key_path; /* owned; NULL unless watching */
	struct file_id cert_id, key_id;
};

static int to_pem_text(const gnutls_datum_t *d, char **ret)
{
	char *text = malloc(d->size + 1);

	if (!text)
		return -ENOMEM;
	memcpy(text, d->data, d->size);
	text[d->size] = '\0';
	*ret = text;
	return 0;
}

static int add_name(gnutls_x509_crt_t crt, const char *name)
{
	unsigned char ip[16];

	if (inet_pton(AF_INET, name, ip) == 1)
		return gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, 4,
		                                            GNUTLS_FSAN_APPEND);
	if (inet_pton(AF_INET6, name, ip) == 1)
		return gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, 16,
		                                            GNUTLS_FSAN_APPEND);
	return gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, name,
	                                            (unsigned)strlen(name), GNUTLS_FSAN_APPEND);
}

int tj_serving_cert_self_signed(const char *const *names, size_t n_names, int64_t now_s,
                                char **ret_cert_pem, char **ret_key_pem)
{
	gnutls_x509_privkey_t key = NULL;
	gnutls_x509_crt_t crt = NULL;
	gnutls_datum_t cert_pem = { 0 }, key_pem = { 0 };
	unsigned char serial[16];
	char *cert_text = NULL, *key_text = NULL;
	int r = -EIO;

	if (n_names == 0)
		return -EINVAL;
	if (gnutls_x509_privkey_init(&key) < 0)
		return -ENOMEM;
	if (gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
	                                 GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) < 0 ||
	    gnutls_x509_crt_init(&crt) < 0)
		goto out;
	/* A positive serial of 127 random bits, as RFC 5280 asks of a CA. */
	if (gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof(serial)) < 0)
		goto out;
	serial[0] &= 0x7f;
	if (gnutls_x509_crt_set_version(crt, 3) < 0 ||
	    gnutls_x509_crt_set_serial(crt, serial, sizeof(serial)) < 0 ||
	    gnutls_x509_crt_set_activation_time(crt, (time_t)(now_s - 3600)) < 0 ||
	    gnutls_x509_crt_set_expiration_time(crt, (time_t)(now_s + 365 * 86400)) < 0 ||
	    gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, names[0],
	                                  (unsigned)strlen(names[0])) < 0 ||
	    gnutls_x509_crt_set_key(crt, key) < 0 ||
	    gnutls_x509_crt_set_basic_constraints(crt, 0, -1) < 0 ||
	    gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE) < 0 ||
	    gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0) < 0)
		goto out;
	for (size_t i = 0; i < n_names; i++)
		if (add_name(crt, names[i]) < 0)
			goto out;
	if (gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0) < 0 ||
	    gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &cert_pem) < 0 ||
	    gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &key_pem) < 0)
		goto out;
	if ((r = to_pem_text(&cert_pem, &cert_text)) < 0 ||
	    (r = to_pem_text(&key_pem, &key_text)) < 0)
		goto out;
	*ret_cert_pem = cert_text;
	*ret_key_pem = key_text;
	cert_text = key_text = NULL;
	r = 0;
out:
	free(cert_text);
	free(key_text);
	gnutls_free(cert_pem.data);
	gnutls_free(key_pem.data);
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_privkey_deinit(key);
	return r;
}

static void generation_free(struct generation *g)
{
	while (g) {
		struct generation *older = g->older;

		for (unsigned i = 0; i < g->n; i++)
			gnutls_pcert_deinit(&g->chain[i]);
		gnutls_privkey_deinit(g->key);
		free(g);
		g = older;
	}
}

static int key_id_of(gnutls_pubkey_t pub, unsigned char id[64], size_t *len)
{
	*len = 64;
	return gnutls_pubkey_get_key_id(pub, GNUTLS_KEYID_USE_SHA256, id, len);
}

/* Whether key is the private half of the leaf's public key. */
static bool key_matches(const gnutls_pcert_st *leaf, gnutls_privkey_t key)
{
	gnutls_pubkey_t pub;
	unsigned char a[64], b[64];
	size_t alen, blen;
	bool same = false;

	if (gnutls_pubkey_init(&pub) < 0)
		return false;
	if (gnutls_pubkey_import_privkey(pub, key, 0, 0) == 0 && key_id_of(pub, a, &alen) == 0 &&
	    key_id_of(leaf->pubkey, b, &blen) == 0)
		same = alen == blen && memcmp(a, b, alen) == 0;
	gnutls_pubkey_deinit(pub);
	return same;
}

static int parse_generation(const char *cert_pem, size_t cert_len, const char *key_pem,
                            size_t key_len, struct generation **ret, char *err, size_t errlen)
{
	gnutls_datum_t cd = { .data = (unsigned char *)cert_pem, .size = (unsigned)cert_len };
	gnutls_datum_t kd = { .data = (unsigned char *)key_pem, .size = (unsigned)key_len };
	struct generation *g = calloc(1, sizeof(*g));
	int gr;

	if (!g)
		return -ENOMEM;
	g->n = MAX_CHAIN;
	gr = gnutls_pcert_list_import_x509_raw(g->chain, &g->n, &cd, GNUTLS_X509_FMT_PEM, 0);
	if (gr < 0 || g->n == 0) {
		g->n = 0;
		snprintf(err, errlen, "the certificate does not parse: %s", gnutls_strerror(gr));
		goto fail_generation;
	}
	if (gnutls_privkey_init(&g->key) < 0) {
		snprintf(err, errlen, "out of memory");
		goto fail_generation;
	}
	gr = gnutls_privkey_import_x509_raw(g->key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (gr < 0) {
		snprintf(err, errlen, "the key does not parse: %s", gnutls_strerror(gr));
		goto fail_generation;
	}
	if (!key_matches(&g->chain[0], g->key)) {
		snprintf(err, errlen, "the key is not the certificate's");
		goto fail_generation;
	}
	*ret = g;
	return 0;

fail_generation:
	generation_free(g);
	return -EBADMSG;
}

int tj_serving_cert_from_pem(const char *cert_pem, size_t cert_len, const char *key_pem,
                             size_t key_len, struct tj_serving_cert **ret, char *err, size_t errlen)
{
	struct tj_serving_cert *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	r = parse_generation(cert_pem, cert_len, key_pem, key_len, &c->current, err, errlen);
	if (r < 0) {
		free(c);
		return r;
	}
	*ret = c;
	return 0;
}

static int file_id_of(const char *path, struct file_id *ret)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	*ret = (struct file_id){
		.dev = st.st_dev, .ino = st.st_ino, .size = st.st_size, .mtime = st.st_mtim
	};
	return 0;
}

static bool same_file(const struct file_id *a, const struct file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* Reads both files into a new generation. */
static int read_pair(const char *cert_path, const char *key_path, struct generation **ret,
                     char *err, size_t errlen)
{
	char *cert = NULL, *key = NULL;
	size_t cert_len, key_len;
	int r;

	r = tj_read_file(cert_path, TJ_SERVING_CERT_MAX_FILE, 0, &cert, &cert_len);
	if (r < 0) {
		snprintf(err, errlen, "cannot read %s: %s", cert_path, strerror(-r));
		return r;
	}
	r = tj_read_file(key_path, TJ_SERVING_CERT_MAX_FILE, 0, &key, &key_len);
	if (r < 0) {
		snprintf(err, errlen, "cannot read %s: %s", key_path, strerror(-r));
		free(cert);
		return r;
	}
	r = parse_generation(cert, cert_len, key, key_len, ret, err, errlen);
	free(cert);
	/* The key's bytes go before the buffer does. */
	explicit_bzero(key, key_len);
	free(key);
	return r;
}

static void on_poll(uv_timer_t *timer)
{
	struct tj_serving_cert *c = timer->data;
	struct file_id cert_id, key_id;
	struct generation *g;
	char err[256];
	int r;

	if (file_id_of(c->cert_path, &cert_id) < 0 || file_id_of(c->key_path, &key_id) < 0)
		return; /* in the middle of a swap, or gone: try again at the next poll */
	if (same_file(&cert_id, &c->cert_id) && same_file(&key_id, &c->key_id))
		return;
	c->cert_id = cert_id;
	c->key_id = key_id;
	r = read_pair(c->cert_path, c->key_path, &g, err, sizeof(err));
	if (r < 0) {
		tj_log_warn("http",
		            "kept the previous serving certificate: the new one is unusable",
		            TJ_STR("problem", err));
		return;
	}
	g->older = c->current;
	c->current = g;
	c->generation++;
	tj_log_info("http", "reloaded the serving certificate", TJ_STR("cert", c->cert_path),
	            TJ_INT("generation", (long long)c->generation));
}

int tj_serving_cert_watch(uv_loop_t *loop, const char *cert_path, const char *key_path,
                          uint64_t poll_ms, struct tj_serving_cert **ret, char *err, size_t errlen)
{
	struct tj_serving_cert *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	c->cert_path = strdup(cert_path);
	c->key_path = strdup(key_path);
	if (!c->cert_path || !c->key_path) {
		r = -ENOMEM;
		goto fail_cert;
	}
	/* Identities first: a change between them and the read is seen at the first poll. */
	if ((r = file_id_of(cert_path, &c->cert_id)) < 0) {
		snprintf(err, errlen, "cannot read %s: %s", cert_path, strerror(-r));
		goto fail_cert;
	}
	if ((r = file_id_of(key_path, &c->key_id)) < 0) {
		snprintf(err, errlen, "cannot read %s: %s", key_path, strerror(-r));
		goto fail_cert;
	}
	r = read_pair(cert_path, key_path, &c->current, err, errlen);
	if (r < 0)
		goto fail_cert;
	uv_timer_init(loop, &c->timer);
	c->timer.data = c;
	c->watching = true;
	uv_timer_start(&c->timer, on_poll, poll_ms, poll_ms);
	*ret = c;
	return 0;

fail_cert:
	free(c->cert_path);
	free(c->key_path);
	free(c);
	return r;
}

void tj_serving_cert_current(const struct tj_serving_cert *c, gnutls_pcert_st **ret_chain,
                             unsigned *ret_len, gnutls_privkey_t *ret_key)
{
	*ret_chain = c->current->chain;
	*ret_len = c->current->n;
	*ret_key = c->current->key;
}

unsigned tj_serving_cert_generation(const struct tj_serving_cert *c)
{
	return c->generation;
}

static void release(struct tj_serving_cert *c)
{
	generation_free(c->current);
	free(c->cert_path);
	free(c->key_path);
	free(c);
}

static void on_timer_closed(uv_handle_t *handle)
{
	release(handle->data);
}

void tj_serving_cert_free(struct tj_serving_cert *c)
{
	if (!c)
		return;
	if (c->watching)
		uv_close((uv_handle_t *)&c->timer, on_timer_closed);
	else
		release(c);
}
