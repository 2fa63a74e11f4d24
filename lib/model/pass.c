/* pass.c: logits handed over in blocks, gathered into one buffer */
#include <string.h>

#include "pass.h"

int tf_logits_copy(void *ctx, int64_t row0, int64_t rows, const float *logits)
{
	tf_logits_into *b = ctx;

	memcpy(b->dst + (row0 - b->first) * b->V, logits, rows * b->V * sizeof *logits);
	return 0;
}
