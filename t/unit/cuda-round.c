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

static tf_model *m;
static int64_t V;

#include "rounds.h"

/* the stream alone: its prompt in the same pieces as in the rounds, then
 * one step at a time */
static void solo(struct stream *s)
{
	tf_decoder *d = tf_decoder_new(m);

	DIE_IF(d ? 0 : -1);
	for (int t = 0; t < s->np; t += s->piece) {
		int n = s->np - t < s->piece ? s->np - t : s->piece;
		DIE_IF(tf_decoder_forward(d, s->prompt + t, n, s->solo, TF_FWD_LAST | TF_FWD_CHUNKED));
	}
	solo_steps(s, d);
	tf_decoder_free(d);
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
