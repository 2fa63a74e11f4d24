/* draft: the pieces of speculative decoding (lib/draft, sample.h). The
 * sampler's uniform of draw k is splitmix64's output k, the stateful
 * rule's number, reached without the draws before it, and tf_sample_at
 * draws any draw without moving the sampler; --draft specs and tree shapes
 * parse or fail with the reason; the ngram drafter proposes what followed
 * the latest occurrences of the sequence's last ids, merged into a trie
 * within the depth and node bounds; the random drafter fills its shape;
 * and tf_draft_verify on shakespeare-q35, handed trees holding the plain
 * decode's next ids beside wrong branches, keeps exactly the right ids,
 * greedy and sampled, and leaves the sequence where plain steps would
 * have (the steps after it draw the plain ids on). */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "decode/decoder.h"
#include "draft/draft.h"
#include "draft/draft_impl.h"
#include "model/model.h"
#include "tap.h"

#define DIE_IF(x) do { if ((x) < 0) { fprintf(stderr, "%s\n", tf_errmsg()); exit(1); } } while (0)
#define STEPS 40

/* splitmix64 as a state stepped per output, the rule tf-run's uniforms
 * always followed */
static double stateful(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (z >> 11) * (1.0 / 9007199254740992.0);
}

static void uniforms(void)
{
	uint64_t keys[] = { 0, 5, tf_sample_seed(9, 3), ~0ull };
	int same = 1, fresh = 1;

	for (int i = 0; i < 4; i++) {
		uint64_t st = keys[i];
		tf_sampler s = { .temp = 1, .top_p = 1, .rng = keys[i] };
		for (uint64_t k = 0; k < 200; k++) {
			double want = stateful(&st);
			same &= tf_sample_uniform(&s) == want;
			fresh &= tf_sample_uniform_at(keys[i], k) == want;
		}
		same &= s.drawn == 200;
	}
	ok(same, "tf_sample_uniform gives the stateful splitmix64's numbers and counts each draw");
	ok(fresh, "tf_sample_uniform_at(key, k) gives number k without the ones before it");
}

static void draws(void)
{
	float l[64];
	int same = 1;

	for (int i = 0; i < 64; i++)
		l[i] = (float)((i * 37) % 11) * 0.3f;
	tf_sampler s = { .temp = 0.7f, .top_k = 20, .top_p = 0.9f, .rng = 11 };
	tf_sampler at = s;
	for (uint64_t k = 0; k < 50; k++) {
		int a = tf_sample_at(&at, l, 64, k);
		same &= tf_sample(&s, l, 64) == a && s.drawn == k + 1;
	}
	ok(same && at.drawn == 0, "tf_sample is tf_sample_at of the next draw and a count; tf_sample_at moves nothing");
	tf_sampler g = { .temp = 0, .top_p = 1 };
	ok(tf_sample(&g, l, 64) == tf_argmax(l, 64) && g.drawn == 0 && tf_sample_at(&g, l, 64, 9) == tf_argmax(l, 64),
	   "a greedy draw is the argmax and counts no uniform");
}

static void parse_ok(const char *spec, const char *tree, int kind, int n, uint64_t seed, int w, int d)
{
	tf_draft_spec sp;
	int rc = tf_draft_parse(&sp, spec, tree);

	ok(rc == 0 && sp.kind == kind && (kind != TF_DRAFT_NGRAM || sp.n == n) &&
	   (kind != TF_DRAFT_RANDOM || sp.seed == seed) && sp.width == w && sp.depth == d,
	   "--draft %s --draft-tree %s: kind %d, n %d, seed %llu, %dx%d", spec, tree ? tree : "(none)", kind, n,
	   (unsigned long long)seed, w, d);
}

static void parse_bad(const char *spec, const char *tree, const char *why)
{
	tf_draft_spec sp;
	int rc = tf_draft_parse(&sp, spec, tree);

	ok(rc < 0 && strstr(tf_errmsg(), why), "--draft %s --draft-tree %s fails: %s", spec, tree ? tree : "(none)",
	   rc < 0 ? tf_errmsg() : "(it parsed)");
}

static void specs(void)
{
	parse_ok("ngram", NULL, TF_DRAFT_NGRAM, 3, 0, 1, TF_DRAFT_CHAIN);
	parse_ok("ngram:1", "off", TF_DRAFT_NGRAM, 1, 0, 1, TF_DRAFT_CHAIN);
	parse_ok("ngram:64", "4x6", TF_DRAFT_NGRAM, 64, 0, 4, 6);
	parse_ok("random", "1x16", TF_DRAFT_RANDOM, 0, 0, 1, 16);
	parse_ok("random:77", "64x15", TF_DRAFT_RANDOM, 0, 77, 64, 15);
	parse_bad("ngram:0", NULL, "ngram:N takes an n-gram of 1 to 64 ids");
	parse_bad("ngram:3x", NULL, "bad drafter 'ngram:3x'");
	parse_bad("ngrams", NULL, "no drafter 'ngrams'");
	parse_bad("random:x", NULL, "random:SEED takes a seed");
	parse_ok("mtp", NULL, TF_DRAFT_MTP, 0, 0, 1, TF_DRAFT_MTP_CHAIN);
	parse_ok("mtp:2", NULL, TF_DRAFT_MTP, 0, 0, 1, 2);
	parse_ok("mtp:5", "off", TF_DRAFT_MTP, 0, 0, 1, 5);
	parse_ok("mtp:5", "4x2", TF_DRAFT_MTP, 0, 0, 4, 2);
	parse_bad("mtp:0", NULL, "mtp:K takes a chain of 1 to 64 ids");
	parse_bad("mtp:65", NULL, "bad drafter 'mtp:65'");
	parse_bad("mtps", NULL, "no drafter 'mtps'");
	parse_bad("ngram", "0x1", "WIDTH 1 to 64 branches, DEPTH 1 to 64");
	parse_bad("ngram", "x", "bad draft tree 'x'");
	parse_bad("ngram", "64x64", "4097 nodes, a tree pass takes at most 1024");
	parse_bad("ngram", "auto", "'auto' (a shape chosen by timing) is not implemented");
}

/* node i of t as "id<parent" joined by spaces */
static const char *shown(const tf_draft_tree *t)
{
	static char buf[1024];
	size_t k = 0;

	buf[0] = 0;
	for (int64_t i = 0; i < t->n && k < sizeof buf - 32; i++)
		k += snprintf(buf + k, sizeof buf - k, "%s%d<%d", i ? " " : "", t->id[i], t->parent[i]);
	return buf;
}

static void ngrams(void)
{
	/* ... 1 2 3 followed by 9 once, by 7 5 later, and the tail 1 2 3 */
	static const int32_t ids[] = { 1, 2, 3, 9, 8, 1, 2, 3, 7, 5, 4, 1, 2, 3 };
	int64_t n = sizeof ids / sizeof *ids;
	tf_draft_spec sp;
	tf_draft_tree t;
	tf_drafter *dr;

	DIE_IF(tf_draft_parse(&sp, "ngram:3", NULL));
	dr = tf_drafter_new(&sp, 16, 0);
	tf_drafter_propose(dr, ids, n, 8, 100, &t);
	ok(!strcmp(shown(&t), "3<-1 7<0 5<1 4<2 1<3 2<4 3<5"),
	   "chain: what followed the latest 1 2 3, to the sequence's end: %s", shown(&t));
	tf_drafter_propose(dr, ids, n, 2, 100, &t);
	ok(!strcmp(shown(&t), "3<-1 7<0 5<1"), "chain: cut at depth 2: %s", shown(&t));
	tf_drafter_free(dr);

	DIE_IF(tf_draft_parse(&sp, "ngram:3", "4x3"));
	dr = tf_drafter_new(&sp, 16, 0);
	tf_drafter_propose(dr, ids, n, 3, 100, &t);
	ok(!strcmp(shown(&t), "3<-1 7<0 5<1 4<2 9<0 8<4 1<5"),
	   "tree: the latest continuation first, the earlier one a second branch: %s", shown(&t));
	tf_drafter_propose(dr, ids, n, 3, 5, &t);
	ok(!strcmp(shown(&t), "3<-1 7<0 5<1 4<2 9<0"), "tree: cut at 5 nodes, parents kept: %s", shown(&t));
	tf_drafter_free(dr);

	/* 2 3 after 1 twice: the second adds nothing, so width 2 takes a third */
	static const int32_t rep[] = { 1, 2, 6, 1, 2, 3, 1, 2, 3, 1 };
	DIE_IF(tf_draft_parse(&sp, "ngram:1", "2x2"));
	dr = tf_drafter_new(&sp, 16, 0);
	tf_drafter_propose(dr, rep, 10, 2, 100, &t);
	ok(!strcmp(shown(&t), "1<-1 2<0 3<1 6<1"), "tree: a continuation already there is no branch: %s", shown(&t));
	static const int32_t none[] = { 4, 5, 6, 7 };
	tf_drafter_propose(dr, none, 4, 2, 100, &t);
	ok(t.n == 1 && t.id[0] == 7, "no earlier occurrence: the root alone");
	tf_drafter_propose(dr, none, 1, 2, 100, &t);
	ok(t.n == 1 && t.id[0] == 4, "a sequence of one id: the root alone");
	tf_drafter_free(dr);
}

static void randoms(void)
{
	static const int32_t ids[] = { 3, 1, 4 };
	tf_draft_spec sp;
	tf_draft_tree t;
	tf_drafter *dr, *again;
	int fine = 1;

	DIE_IF(tf_draft_parse(&sp, "random:2", "3x4"));
	dr = tf_drafter_new(&sp, 10, 0);
	again = tf_drafter_new(&sp, 10, 0);
	tf_drafter_propose(dr, ids, 3, 4, 1000, &t);
	fine = t.n == 13 && t.id[0] == 4 && t.parent[0] == -1;
	for (int64_t i = 1; i < t.n; i++)
		fine &= t.id[i] >= 0 && t.id[i] < 10 && t.parent[i] >= 0 && t.parent[i] < i &&
			(t.parent[i] == 0) == ((i - 1) % 4 == 0);
	ok(fine, "random 3x4: the root and 3 branches of 4 ids in the vocabulary: %s", shown(&t));
	char first[1024];
	strcpy(first, shown(&t));
	tf_drafter_propose(again, ids, 3, 4, 1000, &t);
	ok(!strcmp(first, shown(&t)), "the same seed and sequence draft the same ids");
	tf_drafter_propose(dr, ids, 3, 2, 6, &t);
	ok(t.n == 6, "random: cut at 6 nodes: %s", shown(&t));
	tf_drafter_free(dr);
	tf_drafter_free(again);
}

/* ------------------------------------------------------------------------
 * verify on the model, against plain steps */

static tf_model *m;
static int64_t V;
static int32_t prompt[64];
static int nprompt;

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

/* the plain decode: ids[0] drawn after the prompt, then a step an id */
static void plain(tf_sampler s, int32_t *ids)
{
	tf_decoder *d = after_prompt(&s, &ids[0]);
	float *l = malloc(4 * V);

	for (int t = 1; t < STEPS; t++) {
		DIE_IF(tf_decoder_forward(d, &ids[t - 1], 1, l, 0));
		ids[t] = tf_sample(&s, l, V);
	}
	free(l);
	tf_decoder_free(d);
}

static void verifies(const char *what, tf_sampler s0)
{
	int32_t want[STEPS], got[STEPS], out[TF_DRAFT_DEPTH_MAX + 1];
	tf_sampler s = s0;
	tf_draft_spec sp;
	tf_draft_tree t = { 0 };
	int have = 0, right = 1, lens = 1;
	float *l = malloc(4 * V);

	plain(s0, want);
	DIE_IF(tf_draft_parse(&sp, "ngram", NULL));
	tf_drafter *dr = tf_drafter_new(&sp, V, 0);
	tf_decoder *d = after_prompt(&s, &got[0]);
	have = 1;
	/* rounds of: a wrong branch, the next 4 plain ids beside a wrong id
	 * under the second; every round takes 5 */
	for (int r = 0; r < 3; r++) {
		int64_t pos = tf_decoder_pos(d);
		tf_draft_tree_root(&t, got[have - 1]);
		tf_draft_tree_add(&t, (want[have] + 1) % V, 0);
		int32_t at = (int32_t)tf_draft_tree_add(&t, want[have], 0);
		tf_draft_tree_add(&t, (want[have + 1] + 7) % V, at);
		for (int j = 1; j < 4; j++)
			at = (int32_t)tf_draft_tree_add(&t, want[have + j], at);
		int k = tf_draft_verify(d, dr, &s, &t, out);
		DIE_IF(k);
		lens &= k == 5 && tf_decoder_pos(d) == pos + 5;
		memcpy(got + have, out, k * sizeof *out);
		have += k;
	}
	ok(lens, "%s: trees with the 4 plain ids next on one branch keep them and add the target's own", what);
	/* a chain right twice, then wrong */
	tf_draft_tree_root(&t, got[have - 1]);
	int32_t at = (int32_t)tf_draft_tree_add(&t, want[have], 0);
	at = (int32_t)tf_draft_tree_add(&t, want[have + 1], at);
	at = (int32_t)tf_draft_tree_add(&t, (want[have + 2] + 1) % V, at);
	tf_draft_tree_add(&t, want[have + 3], at);
	int k = tf_draft_verify(d, dr, &s, &t, out);
	DIE_IF(k);
	ok(k == 3, "%s: a chain wrong at its third id keeps two and the target's own (%d)", what, k);
	memcpy(got + have, out, k * sizeof *out);
	have += k;
	/* then plain steps from where the verify left the sequence */
	for (; have < STEPS; have++) {
		DIE_IF(tf_decoder_forward(d, &got[have - 1], 1, l, 0));
		got[have] = tf_sample(&s, l, V);
	}
	for (int i = 0; i < STEPS; i++)
		if (got[i] != want[i] && right) {
			diag("id %d: %d, plain %d", i, got[i], want[i]);
			right = 0;
		}
	ok(right, "%s: the ids verified and the steps after them are the plain decode's", what);
	ok(s0.temp <= 0 || s.drawn == s0.drawn + STEPS, "%s: the sampler counted one draw an id", what);
	free(t.id);
	free(t.parent);
	free(l);
	tf_drafter_free(dr);
	tf_decoder_free(d);
}

int main(int argc, char **argv)
{
	char path[4096];
	FILE *f;

	uniforms();
	draws();
	specs();
	ngrams();
	randoms();

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
	verifies("greedy", (tf_sampler){ .temp = 0, .top_p = 1 });
	verifies("temperature 0.7, top-k 40", (tf_sampler){ .temp = 0.7f, .top_k = 40, .top_p = 1, .rng = 3 });
	verifies("temperature 1, top-p 0.9", (tf_sampler){ .temp = 1, .top_p = 0.9f, .rng = 8 });
	tf_model_close(m);
	return done();
}
