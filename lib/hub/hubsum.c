/* hubsum.c: sha256 and git blob sha1 through OpenSSL's EVP interface */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "base/err.h"
#include "hubsum.h"

static int start(tf_sum *s, uint64_t size)
{
	if (!EVP_DigestInit_ex(s->ctx, s->sha1 ? EVP_sha1() : EVP_sha256(), NULL))
		return tf_err("cannot start a %s digest", s->sha1 ? "sha1" : "sha256");
	if (s->sha1) {
		char head[32];
		int n = snprintf(head, sizeof head, "blob %" PRIu64, size);

		/* the header's terminating NUL is part of what git hashes */
		if (!EVP_DigestUpdate(s->ctx, head, n + 1))
			return tf_err("sha1 digest failed");
	}
	return 0;
}

static int init(tf_sum *s, int sha1, uint64_t size)
{
	s->sha1 = sha1;
	s->ctx = EVP_MD_CTX_new();
	if (!s->ctx)
		return tf_err("cannot allocate a digest");
	if (start(s, size)) {
		tf_sum_free(s);
		return -1;
	}
	return 0;
}

int tf_sum_init(tf_sum *s, const char *etag, uint64_t size)
{
	return init(s, strlen(etag) == 40, size);
}

int tf_sum_init_sha256(tf_sum *s)
{
	return init(s, 0, 0);
}

int tf_sum_reset(tf_sum *s, uint64_t size)
{
	return start(s, size);
}

int tf_sum_add(tf_sum *s, const void *buf, size_t n)
{
	if (n && !EVP_DigestUpdate(s->ctx, buf, n))
		return tf_err("digest update failed");
	return 0;
}

int tf_sum_hex(tf_sum *s, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	int ok = EVP_DigestFinal_ex(s->ctx, md, &n);

	tf_sum_free(s);
	if (!ok)
		return tf_err("digest failed");
	for (unsigned i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	hex[2 * n] = 0;
	return 0;
}

void tf_sum_free(tf_sum *s)
{
	EVP_MD_CTX_free(s->ctx);
	s->ctx = NULL;
}
