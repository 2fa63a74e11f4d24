/* fuzz-ids.c: token ids as text lines or binary records */
#include "fuzz.h"
#include "io/ids.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "rb");
	tf_ids_reader r;
	tf_seq s = { 0 };

	if (!f)
		return 0;
	tf_ids_open(&r, f, "fuzz");
	while (tf_ids_next(&r, &s, 1000) > 0)
		;
	tf_ids_close(&r);
	tf_seq_free(&s);
	fclose(f);
	return 0;
}
