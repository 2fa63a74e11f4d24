/* round.c: a round of many sequences (round.h) */
#include <stdlib.h>

#include "base/err.h"
#include "cpu/forward.h"
#include "decoder_impl.h"
#include "round.h"

int tf_decoder_round(const tf_round_part *p, int k)
{
	int rc = 0;

	if (k <= 0)
		return 0;
	/* GPU sequences: for now the parts run one after another, each its own
	 * pass (exact, each part's logits its own step's, but the weights are
	 * read once a part); a shared pass of the parts' rows on the device
	 * goes here */
	if (p[0].d->gpu) {
		for (int i = 0; i < k && !rc; i++)
			rc = tf_decoder_forward_each(p[i].d, p[i].ids, p[i].n, p[i].flags, p[i].fn, p[i].ctx);
		return rc;
	}

	/* the CPU: every part's rows in one pass (cpu/forward.h) */
	tf_fwd_part *fp = tf_malloc(k * sizeof *fp);    /* (k) */
	for (int i = 0; i < k; i++) {
		if (p[i].d->gpu || p[i].d->m != p[0].d->m) {
			free(fp);
			return tf_err("a round's sequences must be of one model on one device");
		}
		fp[i] = (tf_fwd_part){ p[i].d->cpu, p[i].ids, p[i].n, p[i].flags, p[i].fn, p[i].ctx };
	}
	rc = tf_forward_multi(fp, k, NULL);
	for (int i = 0; i < k; i++)
		p[i].d->pos = p[i].d->cpu->pos;
	free(fp);
	return rc;
}
