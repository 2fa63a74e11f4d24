/* decoder.c: a sequence on the CPU reference or on the GPU host */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "base/err.h"
#include "cpu/forward.h"
#include "cpu/state.h"
#include "decoder.h"
#include "decoder_impl.h"
#include "gpu/gpu.h"


int tf_decoder_attach(tf_model *m, const char *device)
{
	if (!strcmp(device, "cuda") || (!strcmp(device, "auto") && tf_gpu_available()))
		return tf_gpu_attach(m);
	if (strcmp(device, "cpu") && strcmp(device, "auto"))
		return tf_err("no device '%s' (cpu, cuda or auto)", device);
	return 0;
}

void tf_decoder_detach(tf_model *m)
{
	tf_gpu_detach(m);
}

tf_decoder *tf_decoder_new(const tf_model *m)
{
	tf_decoder *d = tf_calloc(1, sizeof *d);

	d->m = m;
	if (!m->gpu)
		d->cpu = tf_state_new(m);
	else if (!(d->gpu = tf_gpu_seq_new(m))) {
		free(d);
		return NULL;
	}
	return d;
}

void tf_decoder_reset(tf_decoder *d)
{
	d->pos = 0;
	d->keep = 0;
	d->hid_first = d->hid_n = 0;
	if (d->gpu)
		tf_gpu_seq_reset(d->gpu);
	else
		tf_state_reset(d->cpu);
}

int tf_decoder_copy(tf_decoder *dst, const tf_decoder *src)
{
	if (src->gpu) {
		if (tf_gpu_seq_copy(dst->gpu, src->gpu, src->pos) < 0)
			return -1;
	} else {
		tf_state_copy(dst->cpu, src->cpu);
	}
	dst->pos = src->pos;
	return 0;
}

void tf_decoder_free(tf_decoder *d)
{
	if (!d)
		return;
	tf_gpu_seq_free(d->gpu);
	tf_state_free(d->cpu);
	free(d->logits);
	free(d->hid);
	free(d->tree_hid);
	free(d);
}

const tf_model *tf_decoder_model(const tf_decoder *d)
{
	return d->m;
}

int64_t tf_decoder_pos(const tf_decoder *d)
{
	return d->pos;
}

int tf_decoder_on_gpu(const tf_decoder *d)
{
	return d->gpu != NULL;
}

uint64_t tf_decoder_cache_bytes(const tf_model *m, int64_t positions)
{
	return tf_state_bytes(m, positions);
}

uint64_t tf_decoder_exec_bytes(const tf_model *m)
{
	return m->gpu ? tf_gpu_exec_bytes(m) : 0;
}

void tf_decoder_reserve(tf_decoder *d, int64_t positions)
{
	if (d->cpu)
		tf_state_reserve_total(d->cpu, positions);
}

void tf_decoder_on_progress(tf_decoder *d, void (*fn)(void *ctx, int64_t done, int64_t total), void *ctx)
{
	d->progress.fn = fn;
	d->progress.ctx = ctx;
}

int tf_decoder_fits(const tf_decoder *d, int64_t n)
{
	char what[64];

	/* the programs check their inputs against the context up front; this
	 * keeps any pass from going past it all the same */
	snprintf(what, sizeof what, "a sequence of %lld positions", (long long)(d->pos + n));
	return tf_config_check_ctx(&d->m->c, d->pos + n, what);
}

int tf_decoder_forward_each(tf_decoder *d, const int32_t *ids, int64_t n, int flags, tf_logits_fn fn, void *ctx)
{
	/* only the prompt's passes are long enough to be worth telling */
	const tf_pass_progress *pr = flags & TF_FWD_CHUNKED ? &d->progress : NULL;

	if (n <= 0)
		return 0;
	if (tf_decoder_fits(d, n) < 0)
		return -1;
	if (d->gpu) {
		tf_gpu_tree_drop(d->gpu);       /* its rows past pos are overwritten */
		if (tf_gpu_forward_each(d->gpu, d->pos, ids, n, flags, fn, ctx, pr) < 0)
			return -1;
		d->pos += n;
		return 0;
	}
	tf_fwd_part p = { d->cpu, ids, n, flags, fn, ctx, tf_decoder_hidden_room(d, n) };
	int rc = tf_forward_multi(&p, 1, pr);
	d->pos = d->cpu->pos;
	if (!rc)
		tf_decoder_hidden_took(d, n);
	return rc;
}

int tf_decoder_forward(tf_decoder *d, const int32_t *ids, int64_t n, float *logits, int flags)
{
	tf_logits_into b = { logits, flags & TF_FWD_LAST ? n - 1 : 0, d->m->c.vocab };

	return tf_decoder_forward_each(d, ids, n, flags, logits ? tf_logits_copy : NULL, &b);
}

/* the steps with the logits on the host and tf_sample drawing there: the
 * CPU's way, and the GPU's under TF_CUDA_DRAW=0 */
static int host_steps(tf_decoder *d, int32_t id, tf_sampler *s, int n, int stop, tf_id_fn each, void *ctx,
		      int32_t *out, int *got)
{
	int64_t V = d->m->c.vocab;
	int failed = 0;

	if (!d->logits)
		d->logits = tf_malloc(V * sizeof *d->logits);
	for (int k = 0; k < n; k++) {
		if (tf_decoder_forward(d, &id, 1, d->logits, 0) < 0)
			return -1;
		out[k] = id = tf_sample(s, d->logits, V);
		*got = k + 1;
		if (each && !failed && each(ctx, id) < 0)
			failed = 1;
		if (stop && tf_config_is_eos(&d->m->c, id))
			break;
	}
	return failed ? -1 : 0;
}

int tf_decoder_generate(tf_decoder *d, int32_t id, tf_sampler *s, int n, int stop, tf_id_fn each, void *ctx,
			int32_t *out, int *got)
{
	*got = 0;
	if (n < 1 || n > TF_STEPS_MAX)
		return tf_err("%d decode steps in one loop (1 to %d)", n, TF_STEPS_MAX);
	if (tf_decoder_fits(d, n) < 0)
		return -1;
	if (!d->gpu || tf_env_off("TF_CUDA_DRAW"))
		return host_steps(d, id, s, n, stop, each, ctx, out, got);
	tf_gpu_tree_drop(d->gpu);
	int rc = tf_gpu_steps_draw(d->gpu, d->pos, id, s, n, stop, each, ctx, out, got);
	d->pos += *got;
	return rc;
}

int tf_decoder_tree(tf_decoder *d, const tf_tree *t, tf_logits_fn fn, void *ctx)
{
	tf_tree_shape sh;

	/* its deepest branch is what it adds to the sequence */
	if (tf_tree_shape_of(t, &sh) < 0)
		return -1;
	int64_t width = sh.width;
	tf_tree_shape_free(&sh);
	if (tf_decoder_fits(d, width) < 0)
		return -1;
	if (d->gpu)
		return tf_gpu_tree(d->gpu, d->pos, t, fn, ctx);
	if (d->keep && t->n > d->tree_cap) {
		d->tree_cap = t->n;
		d->tree_hid = tf_realloc(d->tree_hid, d->tree_cap * d->m->c.hidden * sizeof *d->tree_hid);
	}
	return tf_forward_tree(d->cpu, t, fn, ctx, d->keep ? d->tree_hid : NULL);
}

int tf_decoder_commit(tf_decoder *d, const int32_t *path, int64_t len)
{
	if (d->gpu) {
		if (tf_gpu_tree_commit(d->gpu, path, len) < 0)
			return -1;
		d->pos += len;
		return 0;
	}
	if (tf_state_commit(d->cpu, path, len) < 0)
		return -1;
	d->pos = d->cpu->pos;
	// the kept path's rows, in path order, as steps along it would give them
	float *h = tf_decoder_hidden_room(d, len);
	int64_t H = d->m->c.hidden;
	for (int64_t i = 0; h && i < len; i++)
		memcpy(h + i * H, d->tree_hid + (int64_t)path[i] * H, H * sizeof *h);
	tf_decoder_hidden_took(d, len);
	return 0;
}

void tf_decoder_rollback(tf_decoder *d)
{
	if (d->gpu)
		tf_gpu_tree_drop(d->gpu);
	else
		tf_state_rollback(d->cpu);
}

int tf_decoder_keep_hidden(tf_decoder *d)
{
	if (d->gpu)
		return tf_err("the model's hidden states are kept on the CPU only");
	d->keep = 1;
	d->hid_first = d->pos;
	d->hid_n = 0;
	return 0;
}

float *tf_decoder_hidden_room(tf_decoder *d, int64_t n)
{
	int64_t H = d->m->c.hidden;

	if (!d->keep || n <= 0)
		return NULL;
	if (d->hid_n + n > d->hid_cap) {
		d->hid_cap = 2 * (d->hid_n + n);
		d->hid = tf_realloc(d->hid, d->hid_cap * H * sizeof *d->hid);
	}
	return d->hid + d->hid_n * H;
}

void tf_decoder_hidden_took(tf_decoder *d, int64_t n)
{
	if (d->keep && n > 0)
		d->hid_n += n;
}

const float *tf_decoder_hidden(const tf_decoder *d, int64_t *first, int64_t *n)
{
	*first = d->hid_first;
	*n = d->keep ? d->hid_n : 0;
	return d->hid;
}

void tf_decoder_hidden_drop(tf_decoder *d)
{
	d->hid_first += d->hid_n;
	d->hid_n = 0;
}
