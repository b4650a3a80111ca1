#include "controller/executor/mpi_key.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "reconcilers/mpi.h"

void tj_mpi_key_clear(struct tj_mpi_key *key)
{
	if (key->private_pem) {
		explicit_bzero(key->private_pem, strlen(key->private_pem));
		free(key->private_pem);
	}
	free(key->authorized_key);
	*key = (struct tj_mpi_key){ 0 };
}

/* GnuTLS's errors are all the same to the caller: the key could not be made. */
static int gnutls_errno(int rc)
{
	return rc == GNUTLS_E_MEMORY_ERROR ? -ENOMEM : -EIO;
}

int tj_mpi_key_generate(struct tj_mpi_key *ret)
{
	gnutls_x509_privkey_t key = NULL;
	gnutls_datum_t pem = { 0 }, x = { 0 }, y = { 0 }, k = { 0 };
	gnutls_ecc_curve_t curve;
	struct tj_mpi_key out = { 0 };
	int rc;

	rc = gnutls_x509_privkey_init(&key);
	if (rc < 0)
		return gnutls_errno(rc);
	rc = gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
	                                  GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP521R1), 0);
	if (rc == 0)
		rc = gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &pem);
	if (rc == 0)
		rc = gnutls_x509_privkey_export_ecc_raw(key, &curve, &x, &y, &k);
	if (rc < 0) {
		rc = gnutls_errno(rc);
		goto out;
	}
	rc = -ENOMEM;
	out.private_pem = strndup((const char *)pem.data, pem.size);
	if (!out.private_pem)
		goto out;
	rc = tj_mpi_authorized_key(x.data, x.size, y.data, y.size, &out.authorized_key);
	if (rc < 0)
		goto out;
	*ret = out;
	out = (struct tj_mpi_key){ 0 };
out:
	tj_mpi_key_clear(&out);
	if (pem.data) {
		explicit_bzero(pem.data, pem.size);
		gnutls_free(pem.data);
	}
	if (k.data) {
		explicit_bzero(k.data, k.size);
		gnutls_free(k.data);
	}
	gnutls_free(x.data);
	gnutls_free(y.data);
	gnutls_x509_privkey_deinit(key);
	return rc;
}
