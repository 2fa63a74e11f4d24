/* bench.c: synthetic models of real geometries, copy bandwidth, timed
 * prompt passes and decode steps on the GPU */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "bench.h"
#include "decode/decoder.h"
#include "decode/pace.h"
#include "decode/round.h"
#include "gpu/gpu.h"
#include "model/geometry.h"
#include "streams.h"

#ifdef TF_CUDA
#include "runtime.cuh"
#endif

/* stand-ins for data pointers: the synthetic weights exist only on the
 * device; equal pointers mark a tied head */
static char embed_mark, head_mark;

static int parse_form(const char *s, tf_weight *w)
{
	int bits, group = 64, used = 0;

	memset(w, 0, sizeof *w);
	w->sdtype = TF_BF16;
	if (!strcmp(s, "bf16")) {
		w->fmt = TF_BF16;
		return 0;
	}
	if (!strcmp(s, "sign1")) {
		w->fmt = TF_SIGN1;
		w->bits = 1;
		w->group = 128;
		return 0;
	}
	if ((sscanf(s, "q%dg%d%n", &bits, &group, &used) == 2 && !s[used]) ||
	    (sscanf(s, "q%d%n", &bits, &used) == 1 && !s[used])) {
		if (bits < 2 || bits > 8 || bits == 7 || (group != 32 && group != 64 && group != 128))
			return tf_err("form '%s': bits must be 2, 3, 4, 5, 6 or 8 and the group 32, 64 or 128", s);
		w->fmt = TF_AFFINE;
		w->bits = bits;
		w->group = group;
		return 0;
	}
	return tf_err("unknown form '%s' (bf16, qB, qBgG or sign1)", s);
}

static tf_weight shaped(const tf_weight *form, int64_t rows, int64_t cols)
{
	tf_weight w = *form;

	w.rows = rows;
	w.cols = cols;
	return w;
}

int tf_bench_synth_check(const char *name, const char *form)
{
	json_t *cfg = tf_geometry_config(name);
	tf_weight f;

	if (!cfg)
		return -1;
	json_decref(cfg);
	return parse_form(form, &f);
}

tf_model *tf_bench_synth(const char *name, const char *form)
{
	json_t *cfg = tf_geometry_config(name);
	tf_weight f;
	tf_model *m;
	tf_config *c;

	if (!cfg || parse_form(form, &f) < 0) {
		json_decref(cfg);
		return NULL;
	}
	m = tf_calloc(1, sizeof *m);
	c = &m->c;
	int rc = tf_config_parse(cfg, NULL, c);
	json_decref(cfg);
	if (rc < 0) {
		free(m);
		return NULL;
	}
	m->conv_dim = 2 * c->lin_k_heads * c->lin_k_dim + c->lin_v_heads * c->lin_v_dim;

	int64_t H = c->hidden, D = c->head_dim, kd = (int64_t)c->lin_k_heads * c->lin_k_dim,
		vd = (int64_t)c->lin_v_heads * c->lin_v_dim;
	m->embed = shaped(&f, c->vocab, H);
	m->embed.data = &embed_mark;
	m->head = m->embed;
	if (!c->tied)
		m->head.data = &head_mark;
	m->layer = tf_calloc(c->layers, sizeof *m->layer);
	for (int i = 0; i < c->layers; i++) {
		tf_layer *l = &m->layer[i];
		l->full = c->full[i];
		l->gate = shaped(&f, c->inter, H);
		l->up = shaped(&f, c->inter, H);
		l->down = shaped(&f, H, c->inter);
		if (l->full) {
			l->q_proj = shaped(&f, 2 * c->heads * D, H);
			l->k_proj = shaped(&f, c->kv_heads * D, H);
			l->v_proj = shaped(&f, c->kv_heads * D, H);
			l->o_proj = shaped(&f, H, c->heads * D);
		} else {
			l->in_qkv = shaped(&f, 2 * kd + vd, H);
			l->in_z = shaped(&f, vd, H);
			l->in_b = shaped(&f, c->lin_v_heads, H);
			l->in_a = shaped(&f, c->lin_v_heads, H);
			l->out_proj = shaped(&f, H, vd);
		}
	}
	if (tf_gpu_synth(m, 0x5eed) < 0) {
		tf_bench_synth_free(m);
		return NULL;
	}
	return m;
}

void tf_bench_synth_free(tf_model *m)
{
	if (!m)
		return;
	tf_gpu_detach(m);
	free(m->layer);
	tf_config_free(&m->c);
	free(m);
}

static uint64_t wbytes(const tf_weight *w)
{
	return tf_weight_bytes(w);
}

uint64_t tf_bench_weight_bytes(const tf_model *m)
{
	const tf_config *c = &m->c;
	uint64_t b = wbytes(&m->embed) + (m->head.data == m->embed.data ? 0 : wbytes(&m->head));

	for (int i = 0; i < c->layers; i++) {
		const tf_layer *l = &m->layer[i];
		b += wbytes(&l->gate) + wbytes(&l->up) + wbytes(&l->down);
		if (l->full)
			b += wbytes(&l->q_proj) + wbytes(&l->k_proj) + wbytes(&l->v_proj) + wbytes(&l->o_proj);
		else
			b += wbytes(&l->in_qkv) + wbytes(&l->in_z) + wbytes(&l->in_b) + wbytes(&l->in_a) +
			     wbytes(&l->out_proj);
	}
	return b;
}

/* what one step of a sequence at position pos reads and writes of its own:
 * its recurrent and conv states (read and written), its KV caches */
static uint64_t state_bytes(const tf_model *m, int64_t pos)
{
	const tf_config *c = &m->c;
	uint64_t b = 0;

	for (int i = 0; i < c->layers; i++)
		if (c->full[i])
			b += 2 * 4ull * (pos + 1) * c->kv_heads * c->head_dim;
		else
			b += 2 * 4ull * ((uint64_t)c->lin_v_heads * c->lin_k_dim * c->lin_v_dim +
					 (uint64_t)(c->conv_k - 1) * m->conv_dim);
	return b;
}

/* the weights a step reads: every matrix, one embedding row */
static uint64_t step_weight_bytes(const tf_model *m)
{
	return tf_bench_weight_bytes(m) - (m->head.data == m->embed.data ? 0 : wbytes(&m->embed)) +
	       wbytes(&m->embed) / m->c.vocab;
}

uint64_t tf_bench_token_bytes(const tf_model *m, int64_t pos)
{
	return step_weight_bytes(m) + state_bytes(m, pos);
}

uint64_t tf_bench_round_bytes(const tf_model *m, int streams, int64_t pos)
{
	/* the matrices once for all streams; an embedding row, the states and
	 * the caches of each */
	return step_weight_bytes(m) + (uint64_t)(streams - 1) * (wbytes(&m->embed) / m->c.vocab) +
	       (uint64_t)streams * state_bytes(m, pos);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void stats(const double *v, int n, tf_bench_rate *r)
{
	double s = 0, ss = 0;

	for (int i = 0; i < n; i++)
		s += v[i];
	r->mean = s / n;
	for (int i = 0; i < n; i++)
		ss += (v[i] - r->mean) * (v[i] - r->mean);
	r->sd = n > 1 ? sqrt(ss / (n - 1)) : 0;
	r->reps = n;
}

#ifndef TF_CUDA

#ifndef TF_NO_CUDA_WHY
#define TF_NO_CUDA_WHY "it was built without nvcc"
#endif

int tf_bench_start(char *name, size_t len, int *sms, uint64_t *mem)
{
	return tf_err("this build has no CUDA support: " TF_NO_CUDA_WHY);
}
double tf_bench_copy_bw(void) { return 0; }
int tf_bench_gemv(tf_model *m, int rows, int reps, tf_bench_rate *r, uint64_t *bytes)
{
	return tf_err("built without CUDA");
}

#else

int tf_bench_start(char *name, size_t len, int *sms, uint64_t *mem)
{
	const tf_cuda_info *di;

	if (tf_cuda_init() < 0)
		return -1;
	di = tf_cuda_device();
	snprintf(name, len, "%s", di->name);
	*sms = di->sms;
	*mem = di->mem_total;
	return 0;
}

double tf_bench_copy_bw(void)
{
	uint64_t n = 1ull << 30;
	void *a = tf_cuda_alloc(n, "the bandwidth test"), *b = tf_cuda_alloc(n, "the bandwidth test");
	tf_cuda_timer *t = tf_cuda_timer_new();
	double best = 0;

	if (!a || !b || !t)
		goto out;
	tf_cuda_zero(a, n);
	/* the median of 9 copies after a warm-up, bytes read plus written */
	double v[9];
	tf_cuda_copy(b, a, n);
	for (int i = 0; i < 9; i++) {
		tf_cuda_timer_start(t);
		tf_cuda_copy(i & 1 ? a : b, i & 1 ? b : a, n);
		double ms = tf_cuda_timer_stop(t);
		v[i] = ms > 0 ? 2.0 * n / (ms * 1e-3) : 0;
	}
	for (int i = 0; i < 9; i++)
		for (int j = i + 1; j < 9; j++)
			if (v[j] < v[i]) {
				double x = v[i];
				v[i] = v[j];
				v[j] = x;
			}
	best = v[4];
out:
	tf_cuda_timer_free(t);
	tf_cuda_free(a);
	tf_cuda_free(b);
	return best;
}

int tf_bench_gemv(tf_model *m, int rows, int reps, tf_bench_rate *r, uint64_t *bytes)
{
	tf_gpu_seq *g = tf_gpu_seq_new(m);
	double *v = tf_malloc(reps * sizeof *v), ms;
	int rc = -1;

	if (!g)
		goto out;
	for (int i = 0; i < reps; i++) {
		if (tf_gpu_gemv_sweep(g, rows, 20, &ms, bytes) < 0)
			goto out;
		v[i] = 1e3 / ms;
	}
	stats(v, reps, r);
	rc = 0;
out:
	tf_gpu_seq_free(g);
	free(v);
	return rc;
}

#endif

/* -----------------------------------------------------------------------
 * timed runs through the decoder, on the CPU or the GPU */

/* ids the benchmarks feed: fixed pseudo-random tokens */
static int32_t *bench_ids(const tf_model *m, int n)
{
	int32_t *ids = tf_malloc((n ? n : 1) * sizeof *ids);
	uint64_t x = 12345;

	for (int i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		ids[i] = (int32_t)((x >> 33) % (uint64_t)m->c.vocab);
	}
	return ids;
}

static int keep_none(void *ctx, int64_t row0, int64_t rows, const float *logits)
{
	return 0;
}

int tf_bench_pp(tf_model *m, int n, int reps, tf_bench_rate *r)
{
	tf_decoder *d = tf_decoder_new(m);
	int32_t *ids = bench_ids(m, n);
	double *v = tf_malloc((reps + 1) * sizeof *v);
	int rc = -1;

	if (!d)
		goto out;
	for (int i = 0; i <= reps; i++) {
		tf_decoder_reset(d);
		double t0 = now();
		if (tf_decoder_forward_each(d, ids, n, TF_FWD_LAST | TF_FWD_CHUNKED, keep_none, NULL) < 0)
			goto out;
		v[i] = n / (now() - t0);
	}
	stats(v + 1, reps, r);
	rc = 0;
out:
	tf_decoder_free(d);
	free(ids);
	free(v);
	return rc;
}

int tf_bench_tg(tf_model *m, int n, int depth, int reps, tf_bench_rate *r)
{
	tf_decoder *d = tf_decoder_new(m);
	int32_t *ids = depth ? bench_ids(m, depth) : NULL;
	double *v = tf_malloc((reps + 1) * sizeof *v);
	tf_sampler s = { .temp = 0, .top_p = 1 };
	int rc = -1;

	if (!d)
		goto out;
	for (int i = 0; i <= reps; i++) {
		int32_t id = 1;
		tf_decoder_reset(d);
		if (depth && tf_decoder_forward_each(d, ids, depth, TF_FWD_LAST | TF_FWD_CHUNKED, keep_none, NULL) < 0)
			goto out;
		double t0 = now();
		for (int k = 0, got; k < n; k += got) {
			int32_t buf[TF_STEPS_MAX];
			int want = n - k < TF_STEPS_MAX ? n - k : TF_STEPS_MAX;
			if (tf_decoder_generate(d, id, &s, want, 0, NULL, NULL, buf, &got) < 0)
				goto out;
			id = buf[got - 1];
		}
		v[i] = n / (now() - t0);
	}
	stats(v + 1, reps, r);
	rc = 0;
out:
	tf_decoder_free(d);
	free(ids);
	free(v);
	return rc;
}

#define ROW_PASSES 16     /* timed passes a repetition */

int tf_bench_rows(tf_model *m, int n, int reps, tf_bench_rate *r)
{
	tf_decoder *d = tf_decoder_new(m);
	int32_t *ids = bench_ids(m, (ROW_PASSES + 2) * n);
	double *v = tf_malloc(reps * sizeof *v);
	int rc = -1;

	if (!d)
		goto out;
	for (int i = 0; i < reps; i++) {
		tf_decoder_reset(d);
		/* two untimed passes first: the first records the pass's graph */
		for (int k = 0; k < 2; k++)
			if (tf_decoder_forward_each(d, ids + k * n, n, TF_FWD_LAST, keep_none, NULL) < 0)
				goto out;
		double t0 = now();
		for (int k = 2; k < ROW_PASSES + 2; k++)
			if (tf_decoder_forward_each(d, ids + k * n, n, TF_FWD_LAST, keep_none, NULL) < 0)
				goto out;
		v[i] = (now() - t0) * 1e3 / ROW_PASSES;
	}
	stats(v, reps, r);
	rc = 0;
out:
	tf_decoder_free(d);
	free(ids);
	free(v);
	return rc;
}


int tf_bench_streams(tf_model *m, int streams, int n, int depth, int reps, tf_bench_rate *r)
{
	tf_decoder **d = tf_calloc(streams, sizeof *d);                 /* (streams) */
	tf_round_part *p = tf_malloc(streams * sizeof *p);              /* (streams) */
	int32_t *ids = bench_ids(m, (depth ? depth : 1) + n + streams); /* each stream its own offset */
	double *v = tf_malloc((reps + 1) * sizeof *v);
	int rc = -1;

	for (int s = 0; s < streams; s++)
		if (!(d[s] = tf_decoder_new(m)))
			goto out;
	for (int i = 0; i <= reps; i++) {
		/* every stream after its own prompt of depth ids (one id for 0),
		 * untimed; then n rounds of one step for each */
		for (int s = 0; s < streams; s++) {
			tf_decoder_reset(d[s]);
			if (tf_decoder_forward_each(d[s], ids + s, depth ? depth : 1, TF_FWD_LAST | TF_FWD_CHUNKED,
						    keep_none, NULL) < 0)
				goto out;
		}
		double t0 = now();
		for (int k = 0; k < n; k++) {
			for (int s = 0; s < streams; s++)
				p[s] = (tf_round_part){ d[s], ids + (depth ? depth : 1) + k + s, 1, 0, keep_none, NULL };
			if (tf_decoder_round(p, streams) < 0)
				goto out;
		}
		v[i] = (double)n * streams / (now() - t0);
	}
	stats(v + 1, reps, r);
	rc = 0;
out:
	for (int s = 0; s < streams; s++)
		tf_decoder_free(d[s]);
	free(d);
	free(p);
	free(ids);
	free(v);
	return rc;
}

int tf_bench_intake(tf_model *m, int decoders, int prompt, tf_bench_intake_rate *r)
{
	tf_decoder **d = tf_calloc(decoders + 1, sizeof *d);            /* (decoders + 1): the last takes the prompt */
	tf_round_part *p = tf_malloc((decoders + 1) * sizeof *p);       /* (decoders + 1) */
	const int steps = 4096;                                         /* decode steps a stream may take at most */
	int32_t *ids = bench_ids(m, prompt + steps + decoders);
	tf_pace pace;
	int rc = -1, k = 0;
	long rounds = 0, during = 0;

	tf_pace_init(&pace, TF_PACE_SHARE);
	for (int s = 0; s <= decoders; s++)
		if (!(d[s] = tf_decoder_new(m)))
			goto out;
	for (int s = 0; s < decoders; s++)
		if (tf_decoder_forward_each(d[s], ids + s, 1, TF_FWD_LAST | TF_FWD_CHUNKED, keep_none, NULL) < 0)
			goto out;
	/* the intake: rounds of every decoder's step, and a chunk where the
	 * pace allows one */
	double t0 = now();
	for (int fed = 0; fed < prompt; rounds++) {
		int n = 0, chunk = tf_pace_chunk_ok(&pace, decoders);
		if (rounds >= steps)
			goto overlong;
		for (int s = 0; s < decoders; s++)
			p[n++] = (tf_round_part){ d[s], ids + decoders + rounds + s, 1, 0, keep_none, NULL };
		if (chunk) {
			int c = prompt - fed < TF_STREAM_CHUNK ? prompt - fed : TF_STREAM_CHUNK;
			p[n++] = (tf_round_part){ d[decoders], ids + fed, c, TF_FWD_CHUNKED | TF_FWD_LAST,
						  fed + c == prompt ? keep_none : NULL, NULL };
			fed += c;
		}
		tf_pace_begin(&pace);
		if (tf_decoder_round(p, n) < 0)
			goto out;
		tf_pace_end(&pace, decoders, chunk);
	}
	r->ms = (now() - t0) * 1e3;
	during = rounds;
	/* as many rounds of the decoders alone */
	t0 = now();
	for (k = 0; k < during; k++, rounds++) {
		if (rounds >= steps)
			goto overlong;
		for (int s = 0; s < decoders; s++)
			p[s] = (tf_round_part){ d[s], ids + decoders + rounds + s, 1, 0, keep_none, NULL };
		if (tf_decoder_round(p, decoders) < 0)
			goto out;
	}
	r->before = (double)during * decoders / (now() - t0);
	r->during = (double)during * decoders / (r->ms / 1e3);
	rc = 0;
	goto out;
overlong:
	tf_err("an intake of %d ids took more than %d rounds", prompt, steps);
out:
	for (int s = 0; s <= decoders; s++)
		tf_decoder_free(d[s]);
	free(d);
	free(p);
	free(ids);
	return rc;
}
