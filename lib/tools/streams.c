/* streams.c: many sequences generated in shared rounds (streams.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "decode/pace.h"
#include "decode/round.h"
#include "gpu/gpu.h"
#include "streams.h"

/* one input line, from when it is read until its output line is written */
struct stream {
	long index;             /* its sequence number, from 0 */
	tf_seq s;               /* its prompt */
	int64_t fed;            /* prompt ids fed */
	tf_decoder *d;          /* while in flight; NULL before and after */
	tf_sampler smp;         /* its own draws */
	tf_drafter *dr;         /* with a drafter: its own, and */
	int32_t *ids;           /* (nids) its prompt and the ids drawn since */
	int64_t nids, idcap;
	int32_t next;           /* the id to feed next */
	long drawn;             /* ids written */
	int done;               /* its line is complete */
	uint64_t bytes;         /* its cache's bytes, counted against the budget */
	char *text;             /* (len) its output line so far, without the newline */
	size_t len, cap, shown; /* shown: bytes of text already written */
};

struct taken;

struct run {
	const tf_model *m;
	const tf_run_opts *o;
	const tf_streams_opts *so;
	struct stream **q;      /* (nq) the lines not yet written, in input order */
	int nq, qcap;
	int live;               /* streams in flight */
	uint64_t used;          /* their cache bytes */
	tf_pace pace;           /* prompt chunks against the decoding streams */
	/* the GPU sequences that streams left, kept for the next ones (their
	 * caches and captured steps are not made again for every line) */
	tf_decoder **pool;      /* (parallel) */
	int npool;
	tf_round_part *parts;   /* (parallel) a round's */
	struct taken *taken;    /* (parallel) */
};

static void append(struct stream *x, const char *p, size_t n)
{
	if (x->len + n > x->cap) {
		x->cap = (x->len + n) * 2 + 64;
		x->text = tf_realloc(x->text, x->cap);
	}
	memcpy(x->text + x->len, p, n);
	x->len += n;
}

/* the stream ends when it has its ids or drew an end id (not written) */
static void put_id(struct run *r, struct stream *x, int32_t id)
{
	const tf_run_opts *o = r->o;
	char buf[24];

	if (!o->ignore_eos && tf_config_is_eos(&r->m->c, id)) {
		x->done = 1;
		return;
	}
	append(x, buf, snprintf(buf, sizeof buf, o->stream ? "%d " : x->drawn ? " %d" : "%d", id));
	if (x->dr) {
		if (x->nids == x->idcap)
			x->ids = tf_realloc(x->ids, (x->idcap = 2 * x->idcap + 64) * sizeof *x->ids);
		x->ids[x->nids++] = id;
	}
	x->next = id;
	if (++x->drawn >= o->gen)
		x->done = 1;
}

struct taken {
	struct run *r;
	struct stream *x;
	int step;               /* a decode step's row, not a prompt's */
};

/* a round's logits row of a stream (the last prompt row, or a step's):
 * its next id */
static int take(void *ctx, int64_t row0, int64_t rows, const float *logits)
{
	struct taken *t = ctx;
	tf_draft_stats *st = t->r->so->stats;

	put_id(t->r, t->x, tf_sample(&t->x->smp, logits, t->r->m->c.vocab));
	if (st && t->step)
		st->passes++, st->made++;
	return 0;
}

/* writes what may be written, in input order: the finished lines at the
 * head of the queue, and with --stream the ids so far of the first line
 * not finished (the one stream written live) */
static int flush(struct run *r)
{
	FILE *f = r->o->f;
	int k = 0;

	for (; k < r->nq; k++) {
		struct stream *x = r->q[k];
		if (x->done || r->o->stream) {
			fwrite(x->text + x->shown, 1, x->len - x->shown, f);
			x->shown = x->len;
		}
		if (!x->done)
			break;
		fputc('\n', f);
		tf_seq_free(&x->s);
		free(x->text);
		free(x);
	}
	memmove(r->q, r->q + k, (r->nq - k) * sizeof *r->q);
	r->nq -= k;
	if ((r->o->stream && fflush(f)) || ferror(f))
		return tf_err("write error:");
	return 0;
}

/* b as the messages show it: KiB below a MiB, MiB above */
static const char *size(uint64_t b, char buf[32])
{
	if (b < 1024 * 1024)
		snprintf(buf, 32, "%.1f KiB", b / 1024.0);
	else
		snprintf(buf, 32, "%.1f MiB", b / (1024.0 * 1024.0));
	return buf;
}

/* the budget's verdict on x: 1 admitted, 0 wait, -1 never (an error) */
static int admit(struct run *r, struct stream *x)
{
	const tf_model *m = r->m;
	uint64_t budget = r->so->budget;
	int64_t positions = (int64_t)x->s.n + r->o->gen;
	char what[96];

	/* the whole of its line within the context, known before it runs */
	snprintf(what, sizeof what, "sequence %ld: prompt of %zu ids plus -n %ld", x->index + 1, x->s.n, r->o->gen);
	if (tf_config_check_ctx(&m->c, positions, what) < 0)
		return -1;
	x->bytes = tf_decoder_cache_bytes(m, positions);
	if (budget && x->bytes > budget) {
		/* what a budget this size holds: the fixed part (states) plus
		 * a KV row set per position */
		uint64_t fixed = tf_decoder_cache_bytes(m, 0), per = tf_decoder_cache_bytes(m, 1) - fixed;
		int64_t fits = budget > fixed && per ? (int64_t)((budget - fixed) / per) - r->o->gen : -1;
		char need[32], has[32];
		if (fits < 1)
			return tf_err("sequence %ld needs %s of cache, the budget is %s "
				      "(it holds no prompt with -n %ld)",
				      x->index + 1, size(x->bytes, need), size(budget, has), r->o->gen);
		return tf_err("sequence %ld needs %s of cache, the budget is %s "
			      "(it holds a prompt of at most %lld ids with -n %ld)",
			      x->index + 1, size(x->bytes, need), size(budget, has), (long long)fits, r->o->gen);
	}
	if (budget && r->used + x->bytes > budget)
		return 0;
	if (r->npool)
		x->d = r->pool[--r->npool];
	else if (!(x->d = tf_decoder_new(m)))
		return -1;
	tf_decoder_reserve(x->d, positions);
	if (r->so->draft) {
		if (!(x->dr = tf_drafter_new(r->so->draft, m->c.vocab, x->index)) || tf_drafter_bind(x->dr, x->d) < 0)
			return -1;
		x->idcap = x->s.n + 64;
		x->ids = tf_malloc(x->idcap * sizeof *x->ids);
		memcpy(x->ids, x->s.ids, x->s.n * sizeof *x->ids);
		x->nids = x->s.n;
	}
	r->used += x->bytes;
	r->live++;
	return 1;
}

/* reads lines and admits them while there is room: 0, or 1 at the end
 * of the input, -1 on an error */
static int take_in(struct run *r, tf_ids_reader *rd, long *index, int *eof)
{
	while (r->live < r->so->parallel) {
		struct stream *x = r->nq ? r->q[r->nq - 1] : NULL;
		/* the last line read waits for room, or a new one is read */
		if (!x || x->done || x->d || x->fed) {
			if (*eof)
				return 0;
			x = tf_calloc(1, sizeof *x);
			int rc = tf_ids_next(rd, &x->s, r->m->c.vocab);
			if (rc <= 0) {
				tf_seq_free(&x->s);
				free(x);
				*eof = 1;
				return rc;
			}
			x->index = (*index)++;
			x->smp = r->o->sampler;
			x->smp.rng = tf_sample_seed(r->o->sampler.rng, x->index);
			if (r->nq == r->qcap)
				r->q = tf_realloc(r->q, (r->qcap = 2 * r->qcap + 8) * sizeof *r->q);
			r->q[r->nq++] = x;
			/* an empty line gets its empty line, in its place */
			if (!x->s.n) {
				x->done = 1;
				continue;
			}
		}
		int rc = admit(r, x);
		if (rc <= 0)
			return rc;
	}
	return 0;
}

static void free_draft(struct stream *x)
{
	tf_drafter_free(x->dr);
	free(x->ids);
	x->dr = NULL;
	x->ids = NULL;
}

/* the streams that finished this round leave their slots and caches */
static void retire(struct run *r)
{
	for (int k = 0; k < r->nq; k++) {
		struct stream *x = r->q[k];
		if (x->done && x->d) {
			/* the CPU's caches are sized exactly to the budget's
			 * count and cheap to make: only the GPU's are kept */
			if (tf_decoder_on_gpu(x->d)) {
				tf_decoder_reset(x->d);
				r->pool[r->npool++] = x->d;
			} else {
				tf_decoder_free(x->d);
			}
			x->d = NULL;
			free_draft(x);
			r->used -= x->bytes;
			r->live--;
		}
	}
}

/*
 * A drafting stream's turn in a round: a tree from its drafter, verified
 * in a pass of its own, the ids drawn along the kept path written. Its
 * branches are cut to the ids the stream still makes, less the target's
 * own, and on the GPU to the nodes a tree pass takes there. 1 when it
 * took its turn, 0 when nothing was drafted (it steps in the shared
 * pass), -1 on an error.
 */
static int draft_turn(struct run *r, struct stream *x)
{
	const tf_draft_spec *sp = r->so->draft;
	tf_draft_stats *st = r->so->stats;
	long left = r->o->gen - x->drawn;
	int depth = tf_draft_depth_fit(x->d, left - 1 < sp->depth ? (int)(left - 1) : sp->depth, 0);
	int64_t nodes = 1 + (int64_t)sp->width * depth;
	int32_t out[TF_DRAFT_DEPTH_MAX + 1];
	tf_draft_tree t;
	double t0 = tf_draft_now(), t1;
	int k;

	if (tf_decoder_on_gpu(x->d) && nodes > TF_GPU_TREE_MAX)
		nodes = TF_GPU_TREE_MAX;
	tf_drafter_propose(x->dr, x->ids, x->nids, depth, nodes, &t);
	t1 = tf_draft_now();
	if (st)
		st->draft_s += t1 - t0;
	if (t.n == 1)
		return 0;
	if ((k = tf_draft_verify(x->d, x->dr, &x->smp, &t, out)) < 0)
		return -1;
	if (st) {
		st->verify_s += tf_draft_now() - t1;
		st->passes++;
		st->drafted++;
		st->proposed += t.n - 1;
		st->accepted += k - 1;
		st->made += k;
	}
	for (int j = 0; j < k && !x->done; j++)
		put_id(r, x, out[j]);
	return 1;
}

/*
 * One round: a decode step of every stream past its prompt (or, drafting,
 * a verified tree), and the next chunk of the oldest stream still in its
 * prompt. With one stream in flight on the GPU, not drafting, the round is
 * instead a loop of up to TF_STEPS_MAX steps drawn on the device, as one
 * stream alone runs there.
 */
static int round_once(struct run *r)
{
	const tf_run_opts *o = r->o;
	tf_draft_stats *st = r->so->stats;
	tf_round_part *p = r->parts;
	struct taken *t = r->taken;
	int k = 0, chunk = 0, steps = 0, rc = 0, decoders = 0;
	double t0 = tf_draft_now(), t1;

	for (int i = 0; i < r->nq; i++)
		decoders += r->q[i]->d && !r->q[i]->done && r->q[i]->fed == (int64_t)r->q[i]->s.n;
	/* a chunk joins when the pace allows (pace.h) */
	if (!tf_pace_chunk_ok(&r->pace, decoders))
		chunk = -1;
	for (int i = 0; i < r->nq; i++) {
		struct stream *x = r->q[i];
		if (!x->d || x->done)
			continue;
		if (x->fed == (int64_t)x->s.n && !x->dr && r->so->parallel == 1 && tf_decoder_on_gpu(x->d)) {
			long left = o->gen - x->drawn;
			int n = left < TF_STEPS_MAX ? (int)left : TF_STEPS_MAX, got;
			int32_t ahead[TF_STEPS_MAX];
			rc = tf_decoder_generate(x->d, x->next, &x->smp, n, !o->ignore_eos, NULL, NULL, ahead, &got);
			for (int j = 0; j < got && !x->done; j++)
				put_id(r, x, ahead[j]);
			if (st) {
				st->passes += got;
				st->made += got;
				st->verify_s += tf_draft_now() - t0;
				st->total_s += tf_draft_now() - t0;
			}
			goto out;
		}
		if (x->fed == (int64_t)x->s.n && x->dr) {
			if ((rc = draft_turn(r, x)) < 0)
				goto out;
			steps |= rc;
			if (rc)
				continue;
		}
		t[k] = (struct taken){ r, x, 0 };
		if (x->fed < (int64_t)x->s.n) {
			if (chunk)
				continue;
			/* --mode step feeds the prompt a token a round, the step path */
			int64_t w = o->step ? 1 : TF_STREAM_CHUNK, left = x->s.n - x->fed, n = left < w ? left : w;
			p[k] = (tf_round_part){ x->d, x->s.ids + x->fed, n, (o->step ? 0 : TF_FWD_CHUNKED) | TF_FWD_LAST,
						n == left ? take : NULL, &t[k] };
			x->fed += n;
			chunk = 1;
			if (r->so->progress)
				r->so->progress(r->so->progress_ctx, x->index, x->s.n, x->fed);
		} else {
			t[k].step = 1;
			steps = 1;
			p[k] = (tf_round_part){ x->d, &x->next, 1, 0, take, &t[k] };
		}
		k++;
	}
	t1 = tf_draft_now();
	tf_pace_begin(&r->pace);
	rc = tf_decoder_round(p, k);
	tf_pace_end(&r->pace, decoders, chunk > 0);
	/* a round that decoded counts whole, a prompt chunk in it or not */
	if (st && steps) {
		st->verify_s += tf_draft_now() - t1;
		st->total_s += tf_draft_now() - t0;
	}
out:
	return rc;
}

int tf_run_streams(const tf_model *m, tf_ids_reader *rd, const tf_run_opts *o, const tf_streams_opts *so)
{
	struct run r = { .m = m, .o = o, .so = so };
	long index = 0;
	int eof = 0, rc = 0;

	tf_pace_init(&r.pace, TF_PACE_SHARE);
	r.pool = tf_malloc(so->parallel * sizeof *r.pool);
	r.parts = tf_malloc(so->parallel * sizeof *r.parts);
	r.taken = tf_malloc(so->parallel * sizeof *r.taken);
	for (;;) {
		if ((rc = take_in(&r, rd, &index, &eof)) < 0 || (rc = flush(&r)) < 0)
			break;
		/* nothing in flight after taking in: the input is at its end
		 * (a line that waits has room once nothing else is in flight) */
		if (!r.live)
			break;
		if ((rc = round_once(&r)) < 0)
			break;
		retire(&r);
	}
	for (int k = 0; k < r.nq; k++) {
		tf_decoder_free(r.q[k]->d);
		free_draft(r.q[k]);
		tf_seq_free(&r.q[k]->s);
		free(r.q[k]->text);
		free(r.q[k]);
	}
	for (int k = 0; k < r.npool; k++)
		tf_decoder_free(r.pool[k]);
	free(r.q);
	free(r.pool);
	free(r.parts);
	free(r.taken);
	return rc < 0 ? -1 : 0;
}
