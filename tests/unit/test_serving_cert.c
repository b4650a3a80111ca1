/* The serving certificate: made up self-signed, read from PEM, refused when the key is not
 * the certificate's, and read again from its files when they change. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <gnutls/x509.h>

#include "controller/http/serving_cert.h"
#include "controller/http/serving_cert_internal.h"
#include "controller/log/log.h"
#include "time_limit.h"

static const char *const names[] = { "tjc-0", "localhost", "127.0.0.1", "::1" };

static void make_pair(char **cert, char **key)
{
	assert_int_equal(tj_serving_cert_self_signed(names, 4, (int64_t)time(NULL), cert, key), 0);
}

static void test_self_signed_names_and_validity(void **state)
{
	char *cert, *key;
	gnutls_x509_crt_t crt;
	gnutls_datum_t d;
	time_t now = time(NULL);
	unsigned critical;
	unsigned char ip[16];
	size_t size;
	char dns[64];

	make_pair(&cert, &key);
	assert_non_null(strstr(cert, "-----BEGIN CERTIFICATE-----"));
	assert_non_null(strstr(key, "PRIVATE KEY-----"));
	assert_int_equal(gnutls_x509_crt_init(&crt), 0);
	d = (gnutls_datum_t){ .data = (unsigned char *)cert, .size = (unsigned)strlen(cert) };
	assert_int_equal(gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_PEM), 0);
	assert_true(gnutls_x509_crt_check_hostname(crt, "tjc-0"));
	assert_true(gnutls_x509_crt_check_hostname(crt, "localhost"));
	assert_true(gnutls_x509_crt_check_hostname(crt, "127.0.0.1"));
	assert_false(gnutls_x509_crt_check_hostname(crt, "example.org"));
	size = sizeof(dns);
	assert_int_equal(gnutls_x509_crt_get_subject_alt_name(crt, 0, dns, &size, &critical),
	                 GNUTLS_SAN_DNSNAME);
	assert_string_equal(dns, "tjc-0");
	size = sizeof(ip);
	assert_int_equal(gnutls_x509_crt_get_subject_alt_name(crt, 3, ip, &size, &critical),
	                 GNUTLS_SAN_IPADDRESS);
	assert_int_equal(size, 16);
	assert_true(gnutls_x509_crt_get_activation_time(crt) <= now);
	assert_true(gnutls_x509_crt_get_expiration_time(crt) >= now + 364 * 86400);
	gnutls_x509_crt_deinit(crt);
	free(cert);
	free(key);
}

static void test_from_pem(void **state)
{
	char *cert, *key, *cert2, *key2, err[256] = "";
	struct tj_serving_cert *c = NULL;
	gnutls_pcert_st *chain;
	gnutls_privkey_t pk;
	unsigned n;

	make_pair(&cert, &key);
	make_pair(&cert2, &key2);
	assert_int_equal(tj_serving_cert_from_pem(cert, strlen(cert), key, strlen(key), &c, err,
	                                          sizeof(err)),
	                 0);
	tj_serving_cert_current(c, &chain, &n, &pk);
	assert_int_equal(n, 1);
	assert_non_null(pk);
	assert_int_equal(tj_serving_cert_generation(c), 0);
	tj_serving_cert_free(c);

	c = NULL;
	assert_int_equal(tj_serving_cert_from_pem(cert, strlen(cert), key2, strlen(key2), &c, err,
	                                          sizeof(err)),
	                 -EBADMSG);
	assert_null(c);
	assert_string_equal(err, "the key is not the certificate's");
	assert_int_equal(
	        tj_serving_cert_from_pem("junk", 4, key, strlen(key), &c, err, sizeof(err)),
	        -EBADMSG);
	assert_non_null(strstr(err, "the certificate does not parse"));
	assert_int_equal(
	        tj_serving_cert_from_pem(cert, strlen(cert), "junk", 4, &c, err, sizeof(err)),
	        -EBADMSG);
	assert_non_null(strstr(err, "the key does not parse"));
	free(cert);
	free(key);
	free(cert2);
	free(key2);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* Writes a pair as the kubelet updates a Secret volume: new files, renamed into place. */
static void replace_pair(const char *dir, const char *cert, const char *key)
{
	char tmp[512], dst[512];

	snprintf(tmp, sizeof(tmp), "%s/tls.crt.new", dir);
	snprintf(dst, sizeof(dst), "%s/tls.crt", dir);
	write_text(tmp, cert);
	assert_int_equal(rename(tmp, dst), 0);
	snprintf(tmp, sizeof(tmp), "%s/tls.key.new", dir);
	snprintf(dst, sizeof(dst), "%s/tls.key", dir);
	write_text(tmp, key);
	assert_int_equal(rename(tmp, dst), 0);
}

static void run_until_generation(uv_loop_t *loop, const struct tj_serving_cert *c, unsigned want,
                                 uint64_t limit_ms)
{
	uint64_t deadline = uv_now(loop) + time_limit_ms(limit_ms);

	while (tj_serving_cert_generation(c) < want && uv_now(loop) < deadline)
		uv_run(loop, UV_RUN_ONCE);
	assert_int_equal(tj_serving_cert_generation(c), want);
}

static void test_watch_reloads_and_keeps_the_old_on_a_bad_change(void **state)
{
	char dir[] = "/tmp/tj-serving-cert-XXXXXX", cert_path[512], key_path[512], err[256];
	char *cert, *key, *cert2, *key2, *cert3, *key3;
	struct tj_serving_cert *c;
	gnutls_pcert_st *chain1, *chain2, *chain3;
	gnutls_privkey_t pk1, pk2, pk3;
	unsigned n;
	uv_loop_t loop;

	assert_non_null(mkdtemp(dir));
	snprintf(cert_path, sizeof(cert_path), "%s/tls.crt", dir);
	snprintf(key_path, sizeof(key_path), "%s/tls.key", dir);
	make_pair(&cert, &key);
	make_pair(&cert2, &key2);
	make_pair(&cert3, &key3);
	assert_int_equal(uv_loop_init(&loop), 0);

	assert_int_equal(
	        tj_serving_cert_watch(&loop, cert_path, key_path, 20, &c, err, sizeof(err)),
	        -ENOENT);
	assert_non_null(strstr(err, "tls.crt"));
	replace_pair(dir, cert, key);
	assert_int_equal(
	        tj_serving_cert_watch(&loop, cert_path, key_path, 20, &c, err, sizeof(err)), 0);
	tj_serving_cert_current(c, &chain1, &n, &pk1);

	replace_pair(dir, cert2, key2);
	run_until_generation(&loop, c, 1, 2000);
	tj_serving_cert_current(c, &chain2, &n, &pk2);
	assert_ptr_not_equal(pk1, pk2);

	/* A certificate without its key is refused, and the previous pair stays. */
	replace_pair(dir, cert3, key);
	for (int i = 0; i < 5; i++) {
		uint64_t until = uv_now(&loop) + 30;

		while (uv_now(&loop) < until)
			uv_run(&loop, UV_RUN_ONCE);
	}
	assert_int_equal(tj_serving_cert_generation(c), 1);
	tj_serving_cert_current(c, &chain3, &n, &pk3);
	assert_ptr_equal(pk3, pk2);

	/* Its key arrives: the pair is taken. */
	replace_pair(dir, cert3, key3);
	run_until_generation(&loop, c, 2, 2000);

	tj_serving_cert_free(c);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&loop), 0);
	unlink(cert_path);
	unlink(key_path);
	rmdir(dir);
	free(cert);
	free(key);
	free(cert2);
	free(key2);
	free(cert3);
	free(key3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_signed_names_and_validity),
		cmocka_unit_test(test_from_pem),
		cmocka_unit_test(test_watch_reloads_and_keeps_the_old_on_a_bad_change),
	};

	tj_log_set_level(TJ_LOG_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
