/*
 * cuda-round: many sequences in shared rounds on the GPU (decode/round.h,
 * gpu/round_cuda.c) against each sequence alone on the GPU, bit for bit,
 * on tiny-q35 and the two Shakespeare models (t9102 runs tf-run -P on a
 * 4-bit form too).
 *
 * Alone means fed the same prompt pieces as in the rounds (a prompt chunk
 * of more than a window of rows is a prompt pass, which agrees with
 * windows to a few units in the last place, not bit for bit) and then one
 * step at a time. In the rounds the decode steps of every stream share a
 * pass, and so do prompt pieces of up to a window of rows (a segment of
 * several rows of one sequence among single rows of others). The streams
 * have other prompt lengths (1 to 300 ids), enter at other rounds, end at
 * other rounds, one sits some rounds out, and a crowd of 21 streams needs
 * two passes a round (16 rows at most): every logits row of every stream
 * equals its row alone.
 */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudatest.h"
#include "decode/decoder.h"
#include "decode/round.h"
#include "decode/sample.h"
#include "gpu/gpu.h"
#include "model/model.h"

#ifndef TF_CUDA
int main(void)
{
	skip_all("built without CUDA");
}
#else

#define DIE_IF(x) do { if ((x) < 0) { printf("Bail out! %s\n", tf_errmsg()); exit(1); } } while (0)
#define NMAX 24

static tf_model *m;
static int64_t V;

static void some_ids(int32_t *ids, int n, uint64_t seed)
{
	for (int i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		ids[i] = (int32_t)((seed >> 33) % (uint64_t)V);
	}
}

struct stream {
	int np, steps, piece, start;
	int32_t prompt[300];
	float *solo;            /* (steps + 1, V) its rows alone: the prompt's last, then each step's */
	float *got;             /* (steps + 1, V) its rows in the rounds */
	int rows, fed;
	int32_t next;
	tf_decoder *d;
};

static int take(void *ctx, int64_t row0, int64_t rows, const float *logits)
{
	struct stream *s = ctx;

	memcpy(s->got + (int64_t)s->rows * V, logits, 4 * V);
	s->next = tf_argmax(logits, V);
	s->rows++;
	return 0;
}

static void solo(struct stream *s)
{
	tf_decoder *d = tf_decoder_new(m);
	int32_t id;

	DIE_IF(d ? 0 : -1);
	for (int t = 0; t < s->np; t += s->piece) {
		int n = s->np - t < s->piece ? s->np - t : s->piece;
		DIE_IF(tf_decoder_forward(d, s->prompt + t, n, s->solo, TF_FWD_LAST | TF_FWD_CHUNKED));
	}
	for (int k = 1; k <= s->steps; k++) {
		id = tf_argmax(s->solo + (int64_t)(k - 1) * V, V);
		DIE_IF(tf_decoder_forward(d, &id, 1, s->solo + (int64_t)k * V, 0));
	}
	tf_decoder_free(d);
}

static void rounds(const char *name, int ns, const int *np, const int *steps, const int *piece, const int *start)
{
	struct stream s[NMAX];
	tf_round_part p[NMAX];
	int live = ns, round = 0, mixed = 0, most = 0;

	for (int i = 0; i < ns; i++) {
		s[i] = (struct stream){ .np = np[i], .steps = steps[i], .piece = piece[i], .start = start[i] };
		some_ids(s[i].prompt, np[i], 1000 + i);
		s[i].solo = malloc(4 * V * (steps[i] + 1));
		s[i].got = malloc(4 * V * (steps[i] + 1));
		solo(&s[i]);
		s[i].d = tf_decoder_new(m);
		DIE_IF(s[i].d ? 0 : -1);
	}
	while (live) {
		int k = 0, prompts = 0, decodes = 0;
		for (int i = 0; i < ns; i++) {
			struct stream *x = &s[i];
			if (round < x->start || x->rows > x->steps)
				continue;
			if (i == 1 && x->fed == x->np && round % 3 == 0) {
				p[k++] = (tf_round_part){ x->d, NULL, 0, 0, take, x };
				continue;
			}
			if (x->fed < x->np) {
				int n = x->np - x->fed < x->piece ? x->np - x->fed : x->piece;
				int last = x->fed + n == x->np;
				p[k++] = (tf_round_part){ x->d, x->prompt + x->fed, n, TF_FWD_CHUNKED | TF_FWD_LAST,
							  last ? take : NULL, x };
				x->fed += n;
				prompts++;
			} else {
				p[k++] = (tf_round_part){ x->d, &x->next, 1, 0, take, x };
				decodes++;
			}
		}
		mixed += prompts && decodes;
		most = decodes > most ? decodes : most;
		if (k)
			DIE_IF(tf_decoder_round(p, k));
		for (int i = 0; i < ns; i++)
			if (s[i].rows > s[i].steps && s[i].d) {
				tf_decoder_free(s[i].d);
				s[i].d = NULL;
				live--;
			}
		round++;
	}
	diag("%s: %d rounds, %d with prompt pieces beside decode steps, at most %d steps a round", name, round, mixed,
	     most);
	for (int i = 0; i < ns; i++) {
		int bad = -1;
		for (int r = 0; r <= s[i].steps && bad < 0; r++)
			if (memcmp(s[i].solo + r * V, s[i].got + r * V, 4 * V))
				bad = r;
		ok(s[i].rows == s[i].steps + 1 && bad < 0,
		   "%s: stream %d (prompt %d ids in pieces of %d, from round %d, %d steps): its logits alone, bit for bit%s",
		   name, i, s[i].np, s[i].piece, s[i].start, s[i].steps, bad < 0 ? "" : " (a row differs)");
		if (bad >= 0)
			diag("first row that differs: %d of %d", bad, s[i].steps + 1);
		free(s[i].solo);
		free(s[i].got);
	}
}

static void all_rounds(const char *name)
{
	/* prompts of 5 and 16 ids are segments of several rows in a shared
	 * pass; 17 and more a prompt pass of their own */
	static const int np[] = { 1, 47, 64, 130, 300, 5, 16, 17 };
	static const int steps[] = { 40, 5, 50, 20, 30, 3, 36, 12 };
	static const int piece[] = { 256, 64, 128, 64, 256, 256, 256, 8 };
	static const int start[] = { 0, 0, 3, 7, 12, 20, 20, 2 };
	int crowd_np[21], crowd_steps[21], crowd_piece[21], crowd_start[21];

	rounds(name, 8, np, steps, piece, start);
	for (int i = 0; i < 21; i++) {
		crowd_np[i] = 1 + i % 4;
		crowd_steps[i] = 6 + i % 5;
		crowd_piece[i] = 256;
		crowd_start[i] = i % 3;
	}
	rounds(name, 21, crowd_np, crowd_steps, crowd_piece, crowd_start);
}

int main(int argc, char **argv)
{
	static const char *models[] = { "tiny-q35", "shakespeare-q35", "shakespeare-q35-1bit" };
	char path[4096];
	const char *dir = dirname(strdup(argv[0]));

	cuda_or_skip();
	for (unsigned i = 0; i < sizeof models / sizeof *models; i++) {
		snprintf(path, sizeof path, "%s/../data/%s", dir, models[i]);
		m = tf_model_open(path);
		DIE_IF(m ? 0 : -1);
		DIE_IF(tf_decoder_attach(m, "cuda"));
		V = m->c.vocab;
		if (!tf_gpu_round_takes(m))
			diag("%s: the round's kernels do not take its shapes: parts one after another", models[i]);
		all_rounds(models[i]);
		tf_decoder_detach(m);
		tf_model_close(m);
	}
	return done();
}

#endif
