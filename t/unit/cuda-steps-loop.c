/* cuda-steps-loop: decode steps looped on the device (tf_decoder_generate)
 * against one step a launch on shakespeare-q35: the same greedy and sampled
 * ids across loops of every length, the sampler moved on by the steps taken,
 * a loop ended by an end id taking exactly the steps up to it (the next
 * step's logits bit-identical to those of a sequence fed the same ids one at
 * a time), and the bounds on a loop's length */
#include <libgen.h>
#include <stdio.h>

#include "cudatest.h"
#include "decode/decoder.h"
#include "decode/sample.h"
#include "model/model.h"

#ifndef TF_CUDA
int main(void)
{
	skip_all("built without CUDA");
}
#else

#define STEPS 40

static tf_model *m;
static int64_t V;
static int32_t prompt[64];
static int nprompt;

/* a state that has taken the prompt, and the id tf_sample draws after it */
static tf_decoder *after_prompt(tf_sampler *s, int32_t *first)
{
	float *l = malloc(4 * V);
	tf_decoder *st = tf_decoder_new(m);

	DIE_IF(st ? 0 : -1);
	DIE_IF(tf_decoder_forward(st, prompt, nprompt, l, TF_FWD_LAST | TF_FWD_CHUNKED));
	*first = tf_sample(s, l, V);
	free(l);
	return st;
}

/* the reference: one step a launch, the logits back to the host, tf_sample
 * on them; ids[t] is drawn after step t, logits (STEPS, V) kept */
static void one_at_a_time(tf_sampler s, int32_t *ids, float *logits)
{
	int32_t id;
	tf_decoder *st = after_prompt(&s, &id);

	for (int t = 0; t < STEPS; t++) {
		DIE_IF(tf_decoder_forward(st, &id, 1, logits + (int64_t)t * V, 0));
		ids[t] = id = tf_sample(&s, logits + (int64_t)t * V, V);
	}
	tf_decoder_free(st);
}

/* what a loop hands out while it runs; fails at the id numbered fail_at */
struct handed {
	int32_t id[STEPS];
	int n, fail_at;
};

static int take(void *ctx, int32_t id)
{
	struct handed *h = ctx;

	if (h->n == h->fail_at)
		return tf_err("refused");
	if (h->n < STEPS)
		h->id[h->n] = id;
	h->n++;
	return 0;
}

/* STEPS ids in loops of at most `most` steps */
static void looped(tf_sampler s, int most, int32_t *ids, tf_sampler *after)
{
	int32_t id;
	tf_decoder *st = after_prompt(&s, &id);

	struct handed h = { .fail_at = -1 };
	for (int t = 0, got; t < STEPS; t += got) {
		int n = STEPS - t < most ? STEPS - t : most;
		DIE_IF(tf_decoder_generate(st, id, &s, n, 0, take, &h, ids + t, &got));
		if (got != n) {
			diag("a loop of %d steps took %d", n, got);
			exit(1);
		}
		id = ids[t + got - 1];
	}
	ok(h.n == STEPS && !memcmp(h.id, ids, sizeof h.id), "loops of %d steps hand out each id as it comes", most);
	*after = s;
	tf_decoder_free(st);
}

static void same_ids(const char *what, tf_sampler s)
{
	int32_t want[STEPS], got[STEPS];
	float *l = malloc(4 * (int64_t)STEPS * V);
	static const int most[] = { 1, 3, 16, TF_STEPS_MAX };

	one_at_a_time(s, want, l);
	for (int k = 0; k < 4; k++) {
		tf_sampler after, ref = s;
		looped(s, most[k], got, &after);
		int bad = -1;
		for (int t = 0; t < STEPS && bad < 0; t++)
			if (got[t] != want[t])
				bad = t;
		if (bad >= 0)
			diag("step %d: %d against %d", bad, got[bad], want[bad]);
		ok(bad < 0, "%s, loops of %d steps: the ids of one step a launch", what, most[k]);
		/* one uniform a sampled step, none a greedy one */
		for (int t = 0; t < STEPS + 1 && s.temp > 0; t++)
			tf_sample_uniform(&ref);
		ok(after.rng == ref.rng && after.drawn == ref.drawn,
		   "%s, loops of %d steps: the sampler moved on by the steps taken", what,
		   most[k]);
	}
	free(l);
}

/* a loop that stops after an end id: the steps up to it and no further */
static void stops(tf_sampler s0, const char *what)
{
	int32_t want[STEPS], out[TF_STEPS_MAX], id;
	float *l = malloc(4 * (int64_t)STEPS * V), *next = malloc(4 * V);
	const tf_config keep = m->c;

	one_at_a_time(s0, want, l);
	/* an id drawn at step 9 (its first time) made the model's only end id;
	 * states made after this capture their loops with it */
	int j = 9;
	while (j > 0) {
		int seen = 0;
		for (int t = 0; t < j; t++)
			seen |= want[t] == want[j];
		if (!seen)
			break;
		j--;
	}
	m->c.eos[0] = want[j];
	m->c.neos = 1;
	tf_sampler s = s0, ref = s0;
	tf_decoder *st = after_prompt(&s, &id);
	int64_t pos = tf_decoder_pos(st);
	int got = -1;
	struct handed h = { .fail_at = -1 };
	DIE_IF(tf_decoder_generate(st, id, &s, TF_STEPS_MAX, 1, take, &h, out, &got));
	ok(got == j + 1 && !memcmp(out, want, 4 * (j + 1)),
	   "%s: a loop of %d steps stopping at an end id drawn at step %d took %d, the end id last", what,
	   TF_STEPS_MAX, j, got);
	ok(h.n == got && !memcmp(h.id, out, 4 * got), "%s: the ids handed out are those, the end id last", what);
	ok(tf_decoder_pos(st) == pos + j + 1, "%s: the sequence moved on by the steps taken", what);
	for (int t = 0; t < j + 2 && s0.temp > 0; t++)
		tf_sample_uniform(&ref);
	ok(s.rng == ref.rng && s.drawn == ref.drawn,
	   "%s: the sampler moved on by the steps taken, not by the loop's length", what);
	/* the step after: as if the ids had come one at a time */
	DIE_IF(tf_decoder_forward(st, &out[got - 1], 1, next, 0));
	ok(same_bits("the next step's logits", next, l + (int64_t)(j + 1) * V, V),
	   "%s: the step after the stop gives the logits of one step a launch, bit for bit", what);
	/* and without stop the loop goes past the end id */
	tf_decoder_reset(st);
	s = s0;
	DIE_IF(tf_decoder_forward(st, prompt, nprompt, l, TF_FWD_LAST | TF_FWD_CHUNKED));
	id = tf_sample(&s, l, V);
	DIE_IF(tf_decoder_generate(st, id, &s, 16, 0, NULL, NULL, out, &got));
	ok(got == 16 && !memcmp(out, want, 4 * 16), "%s: without stop a loop goes past the end id", what);
	/* a hand-out that fails: the call fails once the loop is done, and the
	 * sequence has still taken the loop's steps */
	pos = tf_decoder_pos(st);
	h = (struct handed){ .fail_at = 3 };
	int rc = tf_decoder_generate(st, out[15], &s, 8, 0, take, &h, out, &got);
	ok(rc < 0 && strstr(tf_errmsg(), "refused") && h.n == 3 && got == 8 && tf_decoder_pos(st) == pos + 8,
	   "%s: a failing hand-out fails the call after the loop's 8 steps (%s)", what, tf_errmsg());
	tf_decoder_free(st);
	m->c = keep;
	free(l);
	free(next);
}

static void bounds(void)
{
	tf_sampler s = { .temp = 0, .top_p = 1 };
	int32_t out[TF_STEPS_MAX + 1], id;
	tf_decoder *st = after_prompt(&s, &id);
	int got = 7;

	int rc = tf_decoder_generate(st, id, &s, 0, 0, NULL, NULL, out, &got);
	ok(rc < 0 && got == 0 && strstr(tf_errmsg(), "1 to"), "a loop of 0 steps is refused: %s", tf_errmsg());
	rc = tf_decoder_generate(st, id, &s, TF_STEPS_MAX + 1, 0, NULL, NULL, out, &got);
	ok(rc < 0 && got == 0 && strstr(tf_errmsg(), "1 to"), "a loop of %d steps is refused: %s",
	   TF_STEPS_MAX + 1, tf_errmsg());
	tf_decoder_free(st);
}

int main(int argc, char **argv)
{
	char path[4096];
	FILE *f;

	cuda_or_skip();
	snprintf(path, sizeof path, "%s/../data/shakespeare-q35", dirname(strdup(argv[0])));
	m = tf_model_open(path);
	DIE_IF(m ? 0 : -1);
	DIE_IF(tf_decoder_attach(m, "cuda"));
	V = m->c.vocab;
	snprintf(path, sizeof path, "%s/../data/shakespeare-q35/prompt.ids", dirname(strdup(argv[0])));
	if (!(f = fopen(path, "r")))
		DIE_IF(tf_err("%s:", path));
	while (nprompt < 64 && fscanf(f, "%d", &prompt[nprompt]) == 1)
		nprompt++;
	fclose(f);

	same_ids("greedy", (tf_sampler){ .temp = 0, .top_p = 1 });
	same_ids("temperature 0.8", (tf_sampler){ .temp = 0.8f, .top_p = 1, .rng = 5 });
	same_ids("top-k 40, top-p 0.9", (tf_sampler){ .temp = 0.8f, .top_k = 40, .top_p = 0.9f, .rng = 7 });
	stops((tf_sampler){ .temp = 0, .top_p = 1 }, "greedy");
	stops((tf_sampler){ .temp = 1.0f, .top_k = 5, .top_p = 1, .rng = 3 }, "top-k 5");
	bounds();
	tf_decoder_detach(m);
	tf_model_close(m);
	return done();
}
#endif
