/* fuzz-safetensors.c: a safetensors file (header, offsets, dtypes) */
#include <unistd.h>

#include "base/err.h"
#include "fuzz.h"
#include "model/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_file(data, size, path);
	tf_store *s = tf_calloc(1, sizeof *s);

	if (fd >= 0) {
		tf_st_load(s, path);
		close(fd);
	}
	tf_store_close(s);
	return 0;
}
