/* The SSH key pair of an MPI job (reconcilers/mpi.h), generated where its Secret is written:
 * an ECDSA P-521 key, as Kubeflow Trainer's MPI plugin makes it, the private key as PEM
 * "EC PRIVATE KEY" (SEC 1) and the public key as an OpenSSH authorized_keys line. Key
 * generation reads the system's random source (through GnuTLS), so it stays out of the
 * pure reconcilers. */
#pragma once

struct tj_mpi_key {
	char *private_pem;    /* owned; NUL-terminated PEM text */
	char *authorized_key; /* owned; "ecdsa-sha2-nistp521 <base64>\n" */
};

/* Generates a new key pair into *ret. -ENOMEM, or -EIO when GnuTLS fails. */
int tj_mpi_key_generate(struct tj_mpi_key *ret);

/* Frees the strings (and zeroes the private key's text first). */
void tj_mpi_key_clear(struct tj_mpi_key *key);
