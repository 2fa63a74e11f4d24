/* round.c: a round of many sequences (round.h): one pass of all their rows
 * on the CPU, passes of up to a window of rows on the GPU */
#include <stdlib.h>

#include "base/err.h"
#include "base/pool.h"
#include "cpu/forward.h"
#include "decoder_impl.h"
#include "round.h"

/* the logits of part p's rows from a pass's (rows, V) at l: every row's,
 * or with TF_FWD_LAST the last's */
static int hand(const tf_round_part *p, const float *l, int64_t V)
{
	if (!p->fn)
		return 0;
	if (p->flags & TF_FWD_LAST)
		return p->fn(p->ctx, p->n - 1, 1, l + (p->n - 1) * V);
	return p->fn(p->ctx, 0, p->n, l);
}

/* the hand-off of a pass's parts with TF_FWD_APART, on the pool: a
 * round of 32 streams of a 248K vocabulary draws 8M logits on the host,
 * as long as the pass itself when one thread does it */
struct apart {
	const tf_round_part *const *q;  /* (n) */
	const float *const *l;          /* (n) each one's first row */
	int64_t V;
	int failed;
};

static void hand_range(void *ctx, int64_t b, int64_t e)
{
	struct apart *a = ctx;

	for (int64_t i = b; i < e; i++)
		if (hand(a->q[i], a->l[i], a->V) < 0)
			__atomic_store_n(&a->failed, 1, __ATOMIC_RELAXED);
}

/*
 * GPU sequences: the parts of up to a decode window's rows share passes of
 * at most TF_GPU_ROUND_ROWS rows (gpu.h), each row the bits of its
 * sequence's own window; a longer part (a prompt chunk) is a pass of its
 * own, and so is every part where the round's kernels do not take the
 * model's shapes.
 */
static int gpu_round(const tf_round_part *p, int k)
{
	const tf_model *m = p[0].d->m;
	int64_t V = m->c.vocab;
	int shared = tf_gpu_round_takes(m);
	tf_gpu_part gp[TF_GPU_ROUND_ROWS];
	int idx[TF_GPU_ROUND_ROWS];
	int ng = 0, rows = 0;

	for (int i = 0; i < k; i++)
		if (!p[i].d->gpu || p[i].d->m != m)
			return tf_err("a round's sequences must be of one model on one device");
	for (int i = 0; i <= k; i++) {
		/* the pass so far goes when the next part would not fit, and at the end */
		if (ng && (i == k || rows + p[i].n > TF_GPU_ROUND_ROWS)) {
			const float *l;
			if (tf_gpu_round(gp, ng, &l) < 0)
				return -1;
			const tf_round_part *aq[TF_GPU_ROUND_ROWS];
			const float *al[TF_GPU_ROUND_ROWS];
			int na = 0;
			for (int j = 0, r0 = 0; j < ng; r0 += gp[j].n, j++) {
				const tf_round_part *q = &p[idx[j]];
				q->d->pos += q->n;
				if (q->flags & TF_FWD_APART) {
					aq[na] = q;
					al[na++] = l + (int64_t)r0 * V;
				} else if (hand(q, l + (int64_t)r0 * V, V) < 0) {
					return -1;
				}
			}
			struct apart a = { aq, al, V, 0 };
			if (na > 1)
				tf_parallel(na, hand_range, &a);
			else if (na)
				hand_range(&a, 0, 1);
			if (a.failed)
				return -1;
			ng = rows = 0;
		}
		if (i == k || !p[i].n)
			continue;
		if (!shared || p[i].n > TF_GPU_ROUND_ROWS) {
			if (tf_decoder_forward_each(p[i].d, p[i].ids, p[i].n, p[i].flags, p[i].fn, p[i].ctx) < 0)
				return -1;
			continue;
		}
		idx[ng] = i;
		gp[ng++] = (tf_gpu_part){ p[i].d->gpu, p[i].d->pos, p[i].ids, (int)p[i].n };
		rows += (int)p[i].n;
	}
	return 0;
}

int tf_decoder_round(const tf_round_part *p, int k)
{
	int rc = 0;

	if (k <= 0)
		return 0;
	for (int i = 0; i < k; i++)
		if (tf_decoder_fits(p[i].d, p[i].n) < 0)
			return -1;
	if (p[0].d->gpu)
		return gpu_round(p, k);

	/* the CPU: every part's rows in one pass (cpu/forward.h) */
	tf_fwd_part *fp = tf_malloc(k * sizeof *fp);    /* (k) */
	for (int i = 0; i < k; i++) {
		if (p[i].d->gpu || p[i].d->m != p[0].d->m) {
			free(fp);
			return tf_err("a round's sequences must be of one model on one device");
		}
		fp[i] = (tf_fwd_part){ p[i].d->cpu, p[i].ids, p[i].n, p[i].flags, p[i].fn, p[i].ctx,
				       tf_decoder_hidden_room(p[i].d, p[i].n) };
	}
	rc = tf_forward_multi(fp, k, NULL);
	for (int i = 0; i < k; i++) {
		p[i].d->pos = p[i].d->cpu->pos;
		if (!rc)
			tf_decoder_hidden_took(p[i].d, p[i].n);
	}
	free(fp);
	return rc;
}
