/* fuzz-bundle.c: a tf-bundle(5) file: header, manifest, tensor table */
#include <jansson.h>
#include <unistd.h>

#include "base/err.h"
#include "fuzz.h"
#include "model/bundle.h"
#include "model/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_file(data, size, path);
	uint64_t n;

	if (fd < 0)
		return 0;
	json_decref(tf_bundle_manifest(path, &n));
	tf_store *s = tf_calloc(1, sizeof *s);
	tf_bundle_load(s, path);
	tf_store_close(s);
	close(fd);
	return 0;
}
