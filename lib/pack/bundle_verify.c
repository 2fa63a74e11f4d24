/*
 * bundle_verify.c: a bundle's tensor data against the checksums its
 * manifest holds (tf-pack --verify).
 *
 * tf-pack writes each tensor's data_sha256: the SHA-256 of its bytes as
 * stored, from its offset for its "bytes" (the padding between its parts
 * included). A bundle from before that field has only each tensor's source
 * sha256, which equals the stored bytes' only where they are the source's
 * own (path "kept" or "mlx"); other tensors of such a bundle cannot be
 * checked and are counted as such.
 */
#include <string.h>

#include "model/bundle.h"
#include "base/err.h"
#include "hub/hubsum.h"
#include "base/map.h"

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int tf_bundle_verify(const char *path, FILE *report, long *bad, long *unchecked)
{
	json_t *m = tf_bundle_manifest(path, NULL), *t;
	tf_map *mp = m ? tf_map_open(path) : NULL;
	size_t i;
	int rc = -1;

	*bad = *unchecked = 0;
	if (!mp)
		goto out;
	/* tf_bundle_manifest has checked the header and every entry's range */
	const uint64_t data_off = le64((const unsigned char *)mp->data + 32);
	json_array_foreach(json_object_get(m, "tensors"), i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));
		const char *want = json_string_value(json_object_get(t, "data_sha256"));
		const char *path_kind = json_string_value(json_object_get(t, "path"));
		uint64_t off = json_integer_value(json_object_get(t, "offset"));
		uint64_t n = json_integer_value(json_object_get(t, "bytes"));
		char hex[65];
		tf_sum sum;

		if (!want && path_kind && (!strcmp(path_kind, "kept") || !strcmp(path_kind, "mlx")))
			want = json_string_value(json_object_get(t, "sha256"));
		if (!want) {
			fprintf(report, "unchecked %s: no checksum of its stored bytes\n", name);
			++*unchecked;
			continue;
		}
		if (tf_sum_init_sha256(&sum) ||
		    tf_sum_add(&sum, (const unsigned char *)mp->data + data_off + off, n) || tf_sum_hex(&sum, hex))
			goto out;
		if (strcmp(hex, want)) {
			fprintf(report, "BAD %s: its %llu bytes hash to %s, the manifest says %s\n", name,
				(unsigned long long)n, hex, want);
			++*bad;
		} else {
			fprintf(report, "ok %s\n", name);
		}
	}
	rc = 0;
out:
	tf_map_close(mp);
	json_decref(m);
	return rc;
}
