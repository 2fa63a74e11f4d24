/*
 * draft.h: speculative decoding. A drafter guesses the ids that follow a
 * sequence as a token tree (a chain is a tree of one branch); the target
 * runs the whole tree in one pass (tf_decoder_tree), each node's logits
 * the bits of a step along its branch, and draws its own next id at each
 * node as it would have decoding one id at a time: the argmax, or a
 * sample with the uniform of that draw (sample.h). The walk from the root
 * follows the child whose id is the one drawn, and stops where no child
 * has it; that path is committed (tf_decoder_commit) and the ids drawn
 * along it are the output. So the output is plain decoding's, id for id,
 * whatever the drafter proposes: a good drafter makes more ids a pass, a
 * bad one costs the nodes it wasted.
 *
 *   tf_draft_spec sp;
 *   tf_draft_parse(&sp, "ngram:3", "4x6");
 *   tf_drafter *dr = tf_drafter_new(&sp, vocab, index);
 *   tf_drafter_propose(dr, ids, nids, sp.depth, 1 + sp.width * sp.depth, &t);
 *   k = tf_draft_verify(d, dr, &smp, &t, out);      out[0..k): the next ids
 */
#ifndef TF_DRAFT_H
#define TF_DRAFT_H

#include <stdint.h>

#include "decode/decoder.h"
#include "decode/sample.h"

enum { TF_DRAFT_NONE, TF_DRAFT_NGRAM, TF_DRAFT_RANDOM, TF_DRAFT_MTP };

/* the longest n-gram ngram:N matches, and the most branches and ids a
 * branch a tree shape may ask for */
#define TF_NGRAM_MAX 64
#define TF_DRAFT_WIDTH_MAX 64
#define TF_DRAFT_DEPTH_MAX 64
/* a chain's ids when --draft-tree is off */
#define TF_DRAFT_CHAIN 8
/* an mtp chain's ids when mtp:K gives none: each id further the head
 * feeds on its own guess, and on the test model K = 3 made the most ids
 * a second (t/helper/draft-bench.sh) */
#define TF_DRAFT_MTP_CHAIN 3

/* what --draft SPEC and --draft-tree SHAPE ask for */
typedef struct {
	int kind;               /* TF_DRAFT_* */
	int n;                  /* ngram: the n-gram matched, 1 to TF_NGRAM_MAX */
	uint64_t seed;          /* random: the seed of its ids */
	int width;              /* branches at most; 1: a chain */
	int depth;              /* ids a branch at most */
} tf_draft_spec;

/* spec: ngram[:N] (N from 1, default 3), mtp[:K] (the model's own
 * multi-token-prediction head, a chain of K ids, default
 * TF_DRAFT_MTP_CHAIN) or random[:SEED] (a test aid); tree: NULL or "off"
 * (a chain of TF_DRAFT_CHAIN ids, K for mtp) or WIDTHxDEPTH (for mtp:
 * the head's WIDTH likeliest first ids, each the root of a chain DEPTH
 * long); -1 with a message saying what is wrong */
int tf_draft_parse(tf_draft_spec *sp, const char *spec, const char *tree);
/* the spec as tf_draft_parse reads it back: "ngram:3, tree 4x6" */
const char *tf_draft_name(const tf_draft_spec *sp, char buf[96]);

/* a drafted tree: node 0 is the root, the sequence's last id (not yet fed
 * to the target), parent -1; every other node a drafted id whose parent
 * comes before it */
typedef struct {
	int64_t n;
	int32_t *id;            /* (cap) */
	int32_t *parent;        /* (cap) */
	int64_t cap;
} tf_draft_tree;

typedef struct tf_drafter tf_drafter;

/* a drafter of spec sp for ids in [0, vocab), for sequence `index` of a
 * run (a random drafter's ids depend on it, so that a sequence drafts the
 * same whatever runs beside it) */
tf_drafter *tf_drafter_new(const tf_draft_spec *sp, int64_t vocab, long index);
void tf_drafter_free(tf_drafter *dr);
/* ties dr to the sequence d holds, before its prompt is fed (the mtp
 * drafter feeds on the model's hidden states of every position: it asks
 * d to keep them, and checks the head); nothing for the others; -1 with a
 * message (no MTP head, a GPU sequence) */
int tf_drafter_bind(tf_drafter *dr, tf_decoder *d);
/* whether the drafter spec sp can draft for model m, checked before any
 * sequence runs: 0, or -1 with a message */
int tf_draft_check(const tf_draft_spec *sp, const tf_model *m);
/* proposes a tree after ids[0..n) (n >= 1; ids[n - 1] the root) of at
 * most `nodes` nodes (root included) and `depth` ids a branch; a tree of
 * the root alone when it has nothing to propose */
void tf_drafter_propose(tf_drafter *dr, const int32_t *ids, int64_t n, int depth, int64_t nodes,
			tf_draft_tree *t);

/* depth, or less so that a tree of branches that deep stays within d's
 * context: its root the sequence's last id, fed already (fed 1) or not */
int tf_draft_depth_fit(const tf_decoder *d, int depth, int fed);

/* what the rounds did, summed over the rounds a run makes */
typedef struct {
	long passes;            /* target passes of the decoding (a tree, or one id) */
	long drafted;           /* passes that verified drafted ids */
	long proposed;          /* ids drafted */
	long accepted;          /* drafted ids the target drew: the walks' lengths */
	long made;              /* ids the passes drew (accepted and one a pass) */
	double draft_s;         /* seconds proposing */
	double verify_s;        /* seconds in the target's passes (trees and steps) */
	double total_s;         /* seconds of the decoding rounds, all told */
} tf_draft_stats;

/*
 * Verifies t (proposed by dr for the sequence d holds, t's root the
 * sequence's last id, not yet fed) in one tree pass and commits the path
 * the target's draws follow: at each node the id tf_sample_at(s) draws
 * for it, with draw s->drawn + the node's depth; the walk goes on to the
 * child holding that id, the first in node order, and ends where none
 * does. The ids drawn along the path (the accepted ids, then the target's
 * own next) go to out (t's depth + 1 at most), their count returned; s
 * counts a draw for each when sampling. -1 with a message.
 */
int tf_draft_verify(tf_decoder *d, tf_drafter *dr, tf_sampler *s, const tf_draft_tree *t, int32_t *out);

/* seconds on a monotonic clock, for the stats */
double tf_draft_now(void);

#endif
