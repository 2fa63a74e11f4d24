/*
 * hubsum.h: the checksums that name hub blobs, computed while bytes stream.
 *
 * A 64-hex etag is the sha256 of the content (LFS files); a 40-hex etag is
 * git's blob hash, sha1("blob " + decimal size + "\0" + content), so its
 * size must be known before the first byte.
 *
 *   tf_sum s; tf_sum_init(&s, etag, size); tf_sum_add(&s, buf, n) ...;
 *   char hex[65]; tf_sum_hex(&s, hex); strcmp(hex, etag) == 0
 */
#ifndef TF_HUBSUM_H
#define TF_HUBSUM_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
	void *ctx;              /* EVP_MD_CTX */
	int sha1;               /* git blob sha1 rather than sha256 */
} tf_sum;

/* chooses the hash by the etag's length; size is needed for sha1 */
int tf_sum_init(tf_sum *s, const char *etag, uint64_t size);
int tf_sum_init_sha256(tf_sum *s);
int tf_sum_add(tf_sum *s, const void *buf, size_t n);
/* finishes into lowercase hex (64 or 40 digits); the context is freed */
int tf_sum_hex(tf_sum *s, char hex[65]);
void tf_sum_free(tf_sum *s);
/* starts over with the same kind and size */
int tf_sum_reset(tf_sum *s, uint64_t size);

#endif
