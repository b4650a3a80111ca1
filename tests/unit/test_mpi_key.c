/* The MPI key pair: a P-521 key in SEC 1 PEM whose public point is the one the
 * authorized_keys line carries, and a new key each time. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "controller/executor/mpi_key.h"
#include "reconcilers/mpi.h"

/* Reads the PEM back with GnuTLS and returns the authorized_keys line of its public point. */
static char *line_of_pem(const char *pem)
{
	gnutls_x509_privkey_t key;
	gnutls_datum_t in = { (unsigned char *)pem, (unsigned)strlen(pem) }, x, y, k;
	gnutls_ecc_curve_t curve;
	char *line = NULL;

	assert_int_equal(gnutls_x509_privkey_init(&key), 0);
	assert_int_equal(gnutls_x509_privkey_import(key, &in, GNUTLS_X509_FMT_PEM), 0);
	assert_int_equal(gnutls_x509_privkey_get_pk_algorithm(key), GNUTLS_PK_ECDSA);
	assert_int_equal(gnutls_x509_privkey_export_ecc_raw(key, &curve, &x, &y, &k), 0);
	assert_int_equal(curve, GNUTLS_ECC_CURVE_SECP521R1);
	assert_int_equal(tj_mpi_authorized_key(x.data, x.size, y.data, y.size, &line), 0);
	gnutls_free(x.data);
	gnutls_free(y.data);
	gnutls_free(k.data);
	gnutls_x509_privkey_deinit(key);
	return line;
}

static void test_generate(void **state)
{
	static const char head[] = "-----BEGIN EC PRIVATE KEY-----\n";
	static const char tail[] = "-----END EC PRIVATE KEY-----\n";
	struct tj_mpi_key a = { 0 }, b = { 0 };
	size_t n;
	char *line;

	assert_int_equal(tj_mpi_key_generate(&a), 0);
	n = strlen(a.private_pem);
	assert_true(n > sizeof(head) + sizeof(tail));
	assert_memory_equal(a.private_pem, head, sizeof(head) - 1);
	assert_string_equal(a.private_pem + n - (sizeof(tail) - 1), tail);
	/* "ecdsa-sha2-nistp521 " + base64 of a 172-byte blob + "\n" */
	assert_int_equal(strlen(a.authorized_key), 20 + 232 + 1);
	assert_memory_equal(a.authorized_key, "ecdsa-sha2-nistp521 AAAAE2VjZHNhLXNoYTItbmlzdHA1MjE",
	                    51);
	line = line_of_pem(a.private_pem);
	assert_string_equal(line, a.authorized_key);
	free(line);

	assert_int_equal(tj_mpi_key_generate(&b), 0);
	assert_string_not_equal(a.authorized_key, b.authorized_key);
	assert_string_not_equal(a.private_pem, b.private_pem);
	tj_mpi_key_clear(&a);
	assert_null(a.private_pem);
	assert_null(a.authorized_key);
	tj_mpi_key_clear(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generate),
	};
	return cmocka_run_group_tests_name("mpi_key", tests, NULL, NULL);
}
