/* fuzz-records.c: tf-records(5) streams, record by record and row by row */
#include <unistd.h>

#include "fuzz.h"
#include "io/rec.h"
#include "io/rows.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "rb");
	char path[64];
	tf_rec r;
	tf_rows rows;
	int fd;

	if (f) {
		while (tf_rec_read(f, "fuzz", &r) > 0)
			tf_rec_free(&r);
		fclose(f);
	}
	/* the rows reader, with bare float32 rows of 7 values allowed */
	if ((fd = fuzz_file(data, size, path)) >= 0) {
		if (tf_rows_open(&rows, path, 7) == 0) {
			while (tf_rows_next(&rows) > 0)
				;
			tf_rows_close(&rows);
		}
		close(fd);
	}
	return 0;
}
