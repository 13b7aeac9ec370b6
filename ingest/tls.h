/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ingest's TLS files (--tls-cert, --tls-key, --client-ca), read and
 * checked before the sandbox, while a message can still name the file
 * and say what to fix: the certificate and the key parse (PEM, the key
 * unencrypted) and belong together, the CA file holds a certificate.
 * libmicrohttpd takes the PEM text from memory (server.c); the client
 * certificate is checked in the handshake there.
 */
#ifndef TRACER_INGEST_TLS_H
#define TRACER_INGEST_TLS_H

#include <stddef.h>

struct tls_files {
	char *cert;      /* PEM text, NUL-terminated: the server's certificate, then any intermediates */
	char *key;       /* PEM text: its private key */
	char *client_ca; /* PEM text: the CA client certificates must chain to; NULL: none asked for */
};

/*
 * Read cert and key (and client_ca, which may be NULL) into *t and check
 * them. 0, or -errno (open, read) or -EINVAL (content), with err naming
 * the option, the file and what to do; *t is then left empty.
 */
int tls_files_load(struct tls_files *t, const char *cert, const char *key, const char *client_ca, char *err,
		   size_t errlen);

/* Free the text (the key's bytes wiped first). Empty or already freed is fine. */
void tls_files_free(struct tls_files *t);

#endif /* TRACER_INGEST_TLS_H */
