/* SPDX-License-Identifier: Apache-2.0 */
#include "tls.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "readfile.h"

/* The file at path, NUL-terminated, into *out. 0, or -errno with err saying what to do. */
static int read_pem(const char *opt, const char *path, char **out, char *err, size_t errlen)
{
	ssize_t n = read_file_alloc(AT_FDCWD, path, 0, READ_MAX_PEM, out, NULL); /* O_NONBLOCK: a FIFO cannot hang it */

	if (n == -EINVAL || n == -EFBIG)
		snprintf(err, errlen, "%s %s: not a regular file of at most %u bytes (give a PEM file)", opt, path,
			 READ_MAX_PEM);
	else if (n == -ENOMEM)
		snprintf(err, errlen, "%s %s: out of memory", opt, path);
	else if (n < 0)
		snprintf(err, errlen, "%s %s: cannot open: %s (give a PEM file that uid %u can read)", opt, path,
			 strerror((int)-n), (unsigned)geteuid());
	return n < 0 ? (int)n : 0;
}

static gnutls_datum_t datum(const char *pem)
{
	return (gnutls_datum_t){ (unsigned char *)(uintptr_t)pem, (unsigned)strlen(pem) };
}

/* The certificate chain and the key parse, and the key is the certificate's. 0 or -EINVAL with err. */
static int check_pair(const struct tls_files *t, const char *cert, const char *key, char *err, size_t errlen)
{
	gnutls_datum_t c = datum(t->cert), k = datum(t->key);
	gnutls_certificate_credentials_t cred = NULL;
	gnutls_x509_privkey_t pk = NULL;
	gnutls_x509_crt_t *crts = NULL;
	unsigned ncrts = 0;
	int rc;

	rc = gnutls_x509_crt_list_import2(&crts, &ncrts, &c, GNUTLS_X509_FMT_PEM, 0);
	if (rc < 0) {
		snprintf(err, errlen, "--tls-cert %s: no PEM certificate in it (%s): give the server's certificate "
			 "(-----BEGIN CERTIFICATE-----), then any intermediate CA's", cert, gnutls_strerror(rc));
		return -EINVAL;
	}
	rc = gnutls_x509_privkey_init(&pk);
	if (rc == 0)
		rc = gnutls_x509_privkey_import2(pk, &k, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (rc < 0) {
		snprintf(err, errlen, "--tls-key %s: no unencrypted PEM private key in it (%s): give the key of the "
			 "certificate in --tls-cert, without a passphrase", key, gnutls_strerror(rc));
	} else {
		rc = gnutls_certificate_allocate_credentials(&cred);
		if (rc == 0)
			rc = gnutls_certificate_set_x509_key(cred, crts, ncrts, pk); /* checks that they match */
		if (rc == GNUTLS_E_CERTIFICATE_KEY_MISMATCH)
			snprintf(err, errlen, "--tls-key %s does not match the certificate in --tls-cert %s: give the "
				 "private key that certificate was issued for", key, cert);
		else if (rc < 0)
			snprintf(err, errlen, "--tls-cert %s with --tls-key %s: %s", cert, key, gnutls_strerror(rc));
	}
	gnutls_certificate_free_credentials(cred);
	gnutls_x509_privkey_deinit(pk);
	for (unsigned i = 0; i < ncrts; i++)
		gnutls_x509_crt_deinit(crts[i]);
	gnutls_free(crts);
	return rc < 0 ? -EINVAL : 0;
}

/* The CA file holds at least one certificate. 0 or -EINVAL with err. */
static int check_ca(const char *pem, const char *path, char *err, size_t errlen)
{
	gnutls_certificate_credentials_t cred = NULL;
	gnutls_datum_t ca = datum(pem);
	int rc = gnutls_certificate_allocate_credentials(&cred);

	if (rc == 0)
		rc = gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM);
	gnutls_certificate_free_credentials(cred);
	if (rc > 0)
		return 0;
	snprintf(err, errlen, "--client-ca %s: no PEM certificate in it%s%s%s: give the certificate of the CA that "
		 "signs the processors' client certificates", path, rc ? " (" : "", rc ? gnutls_strerror(rc) : "",
		 rc ? ")" : "");
	return -EINVAL;
}

int tls_files_load(struct tls_files *t, const char *cert, const char *key, const char *client_ca, char *err,
		   size_t errlen)
{
	int rc;

	memset(t, 0, sizeof(*t));
	rc = read_pem("--tls-cert", cert, &t->cert, err, errlen);
	if (!rc)
		rc = read_pem("--tls-key", key, &t->key, err, errlen);
	if (!rc && client_ca)
		rc = read_pem("--client-ca", client_ca, &t->client_ca, err, errlen);
	if (!rc)
		rc = check_pair(t, cert, key, err, errlen);
	if (!rc && client_ca)
		rc = check_ca(t->client_ca, client_ca, err, errlen);
	if (rc)
		tls_files_free(t);
	return rc;
}

void tls_files_free(struct tls_files *t)
{
	if (t->key)
		explicit_bzero(t->key, strlen(t->key));
	free(t->cert);
	free(t->key);
	free(t->client_ca);
	memset(t, 0, sizeof(*t));
}
