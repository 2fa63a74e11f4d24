/* decoder: the front on the CPU, against the CPU reference under it on
 * shakespeare-q35: tf_decoder_forward gives tf_forward's logits bit for
 * bit; tf_decoder_generate in runs of every length draws the ids of a
 * forward and tf_sample a step, moves the sampler and the sequence on by
 * the steps taken, stops after an end id when asked and not otherwise,
 * fails after its steps when the hand-out fails, and refuses runs of 0 or
 * more than TF_STEPS_MAX steps; copy forks a sequence; reset empties it;
 * every pass (forward, steps, tree, round) is held to the context */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "cpu/forward.h"
#include "cpu/state.h"
#include "decode/decoder.h"
#include "decode/round.h"
#include "model/model.h"
#include "tap.h"

#define STEPS 40

static tf_model *m;
static int64_t V;
static int32_t prompt[64];
static int nprompt;

#define DIE_IF(x) do { if ((x) < 0) { fprintf(stderr, "%s\n", tf_errmsg()); exit(1); } } while (0)

/* the reference: the CPU's state, a forward and tf_sample a step */
static void reference(tf_sampler s, int32_t *ids)
{
	tf_state *st = tf_state_new(m);
	float *l = malloc(4 * V);
	int32_t id;

	DIE_IF(tf_forward(st, prompt, nprompt, l, TF_FWD_LAST | TF_FWD_CHUNKED));
	id = tf_sample(&s, l, V);
	for (int t = 0; t < STEPS; t++) {
		DIE_IF(tf_forward(st, &id, 1, l, 0));
		ids[t] = id = tf_sample(&s, l, V);
	}
	tf_state_free(st);
	free(l);
}

static tf_decoder *after_prompt(tf_sampler *s, int32_t *first)
{
	tf_decoder *d = tf_decoder_new(m);
	float *l = malloc(4 * V);

	DIE_IF(d ? 0 : -1);
	DIE_IF(tf_decoder_forward(d, prompt, nprompt, l, TF_FWD_LAST | TF_FWD_CHUNKED));
	*first = tf_sample(s, l, V);
	free(l);
	return d;
}

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

static void runs(const char *what, tf_sampler s0)
{
	static const int most[] = { 1, 3, 16, TF_STEPS_MAX };
	int32_t want[STEPS];

	reference(s0, want);
	for (int k = 0; k < 4; k++) {
		tf_sampler s = s0, ref = s0;
		int32_t got_ids[STEPS], id;
		tf_decoder *d = after_prompt(&s, &id);
		struct handed h = { .fail_at = -1 };
		int ok_len = 1;

		for (int t = 0, got; t < STEPS; t += got) {
			int n = STEPS - t < most[k] ? STEPS - t : most[k];
			DIE_IF(tf_decoder_generate(d, id, &s, n, 0, take, &h, got_ids + t, &got));
			ok_len &= got == n;
			id = got_ids[t + got - 1];
		}
		ok(ok_len && !memcmp(got_ids, want, sizeof want), "%s, runs of %d steps: the reference's ids", what,
		   most[k]);
		ok(h.n == STEPS && !memcmp(h.id, want, sizeof want), "%s, runs of %d steps: each id handed out", what,
		   most[k]);
		for (int t = 0; t < STEPS + 1 && s0.temp > 0; t++)
			tf_sample_uniform(&ref);
		ok(s.rng == ref.rng && s.drawn == ref.drawn, "%s, runs of %d steps: the sampler moved on by the draws",
		   what, most[k]);
		ok(tf_decoder_pos(d) == nprompt + STEPS, "%s, runs of %d steps: the sequence holds every id fed", what,
		   most[k]);
		tf_decoder_free(d);
	}
}

static void stops(void)
{
	tf_sampler s = { .temp = 0, .top_p = 1 };
	int32_t want[STEPS], out[TF_STEPS_MAX], id;
	const tf_config keep = m->c;
	struct handed h = { .fail_at = -1 };
	int got, j = 9;

	reference(s, want);
	while (j > 0) {         /* an id drawn at step j for the first time */
		int seen = 0;
		for (int t = 0; t < j; t++)
			seen |= want[t] == want[j];
		if (!seen)
			break;
		j--;
	}
	m->c.eos[0] = want[j];
	m->c.neos = 1;
	tf_decoder *d = after_prompt(&s, &id);
	DIE_IF(tf_decoder_generate(d, id, &s, TF_STEPS_MAX, 1, take, &h, out, &got));
	ok(got == j + 1 && !memcmp(out, want, 4 * got) && h.n == got,
	   "a run stopping at an end id drawn at step %d took %d steps, the end id last", j, got);
	ok(tf_decoder_pos(d) == nprompt + got, "the sequence took the ids fed, not the end id");
	tf_decoder_reset(d);
	ok(tf_decoder_pos(d) == 0, "reset empties the sequence");
	s = (tf_sampler){ .temp = 0, .top_p = 1 };
	tf_decoder_free(d);
	d = after_prompt(&s, &id);
	DIE_IF(tf_decoder_generate(d, id, &s, 16, 0, NULL, NULL, out, &got));
	ok(got == 16 && !memcmp(out, want, 4 * 16), "without stop a run goes past the end id");
	h = (struct handed){ .fail_at = 3 };
	int64_t pos = tf_decoder_pos(d);
	int rc = tf_decoder_generate(d, out[15], &s, 8, 0, take, &h, out, &got);
	ok(rc < 0 && strstr(tf_errmsg(), "refused") && h.n == 3 && got == 8 && tf_decoder_pos(d) == pos + 8,
	   "a failing hand-out fails the call after the run's 8 steps (%s)", tf_errmsg());
	rc = tf_decoder_generate(d, id, &s, 0, 0, NULL, NULL, out, &got);
	ok(rc < 0 && got == 0 && strstr(tf_errmsg(), "1 to"), "a run of 0 steps is refused: %s", tf_errmsg());
	rc = tf_decoder_generate(d, id, &s, TF_STEPS_MAX + 1, 0, NULL, NULL, out, &got);
	ok(rc < 0 && got == 0, "a run of %d steps is refused", TF_STEPS_MAX + 1);
	tf_decoder_free(d);
	m->c = keep;
}

/* the front's logits are the reference's; a copy goes on as the original */
static void forward_and_copy(void)
{
	tf_state *st = tf_state_new(m);
	tf_decoder *d = tf_decoder_new(m), *e = tf_decoder_new(m);
	float *a = malloc(4 * V * nprompt), *b = malloc(4 * V * nprompt);
	int32_t next = 7;

	DIE_IF(tf_forward(st, prompt, nprompt, a, TF_FWD_CHUNKED));
	DIE_IF(tf_decoder_forward(d, prompt, nprompt, b, TF_FWD_CHUNKED));
	ok(!memcmp(a, b, 4 * V * nprompt), "tf_decoder_forward: tf_forward's logits, bit for bit");
	DIE_IF(tf_decoder_copy(e, d));
	DIE_IF(tf_decoder_forward(d, &next, 1, a, 0));
	DIE_IF(tf_decoder_forward(e, &next, 1, b, 0));
	ok(!memcmp(a, b, 4 * V) && tf_decoder_pos(e) == nprompt + 1, "a copy goes on as the original does");
	ok(tf_decoder_forward(d, &(int32_t){ (int32_t)V }, 1, a, 0) < 0 && strstr(tf_errmsg(), "out of range"),
	   "an id past the vocabulary: %s", tf_errmsg());
	tf_state_free(st);
	tf_decoder_free(d);
	tf_decoder_free(e);
	free(a);
	free(b);
}

/* a context of nprompt + 3: a pass past it fails, naming it, and the
 * sequence stays where it was */
static void context(void)
{
	tf_decoder *d = tf_decoder_new(m);
	float *a = malloc(4 * V * (nprompt + 4));
	tf_sampler s = { .temp = 0, .top_p = 1 };
	int32_t ids[4] = { 5, 6, 7, 8 }, out[4], par[3] = { -1, 0, 1 };
	int got;
	tf_tree t = { 3, ids, par };

	DIE_IF(tf_config_set_ctx(&m->c, nprompt + 3));
	DIE_IF(tf_decoder_forward(d, prompt, nprompt, a, TF_FWD_CHUNKED | TF_FWD_LAST));
	ok(tf_decoder_forward(d, ids, 4, a, 0) < 0 &&
	   strstr(tf_errmsg(), "passes the context of") && tf_decoder_pos(d) == nprompt,
	   "a forward past the context: %s", tf_errmsg());
	ok(tf_decoder_generate(d, 5, &s, 4, 0, NULL, NULL, out, &got) < 0 && got == 0 && tf_decoder_pos(d) == nprompt,
	   "steps past it: %s", tf_errmsg());
	ok(tf_decoder_forward(d, ids, 2, a, 0) == 0 && tf_decoder_tree(d, &t, NULL, NULL) < 0 &&
	   strstr(tf_errmsg(), "a sequence of"), "a tree 3 deep on the last free position: %s", tf_errmsg());
	tf_round_part p = { d, ids, 2, 0, NULL, NULL };
	ok(tf_decoder_round(&p, 1) < 0 && strstr(tf_errmsg(), "passes the context"), "a round past it: %s",
	   tf_errmsg());
	ok(tf_decoder_forward(d, ids, 1, a, 0) == 0 && tf_decoder_pos(d) == nprompt + 3, "the context's last position runs");
	m->c.ctx = m->c.max_pos;
	tf_decoder_free(d);
	free(a);
}

int main(int argc, char **argv)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/../data/shakespeare-q35", dirname(strdup(argv[0])));
	m = tf_model_open(path);
	DIE_IF(m ? 0 : -1);
	DIE_IF(tf_decoder_attach(m, "cpu"));
	V = m->c.vocab;
	snprintf(path, sizeof path, "%s/../data/shakespeare-q35/prompt.ids", dirname(strdup(argv[0])));
	if (!(f = fopen(path, "r")))
		DIE_IF(tf_err("%s:", path));
	while (nprompt < 64 && fscanf(f, "%d", &prompt[nprompt]) == 1)
		nprompt++;
	fclose(f);

	forward_and_copy();
	runs("greedy", (tf_sampler){ .temp = 0, .top_p = 1 });
	runs("temperature 0.8", (tf_sampler){ .temp = 0.8f, .top_p = 1, .rng = 5 });
	runs("top-k 40, top-p 0.9", (tf_sampler){ .temp = 0.8f, .top_k = 40, .top_p = 0.9f, .rng = 7 });
	stops();
	context();
	ok(tf_decoder_attach(m, "tpu") < 0 && strstr(tf_errmsg(), "no device 'tpu'"), "an unknown device: %s",
	   tf_errmsg());
	tf_decoder_detach(m);
	tf_model_close(m);
	return done();
}
