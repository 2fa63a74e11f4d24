/* spec.c: --draft SPEC and --draft-tree SHAPE (draft.h) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "draft.h"

/* a whole decimal number in [lo, hi], or -1 */
static long long number(const char *s, long long lo, unsigned long long hi)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < (unsigned long long)lo || v > hi)
		return -1;
	return (long long)v;
}

static int parse_tree(tf_draft_spec *sp, const char *tree)
{
	char w[24], d[24];
	const char *x;
	long long wv, dv;

	if (!tree || !strcmp(tree, "off")) {
		sp->width = 1;
		sp->depth = TF_DRAFT_CHAIN;
		return 0;
	}
	if (!strcmp(tree, "auto"))
		return tf_err("draft tree 'auto' (a shape chosen by timing) is not implemented: "
			      "off or WIDTHxDEPTH such as 4x6");
	x = strchr(tree, 'x');
	if (!x || x - tree >= (long)sizeof w || strlen(x + 1) >= sizeof d)
		return tf_err("bad draft tree '%s': off or WIDTHxDEPTH such as 4x6", tree);
	memcpy(w, tree, x - tree);
	w[x - tree] = 0;
	strcpy(d, x + 1);
	wv = number(w, 1, TF_DRAFT_WIDTH_MAX);
	dv = number(d, 1, TF_DRAFT_DEPTH_MAX);
	if (wv < 0 || dv < 0)
		return tf_err("bad draft tree '%s': WIDTH 1 to %d branches, DEPTH 1 to %d ids a branch", tree,
			      TF_DRAFT_WIDTH_MAX, TF_DRAFT_DEPTH_MAX);
	/* the root and every branch's ids in one pass */
	if (1 + wv * dv > TF_TREE_MAX)
		return tf_err("bad draft tree '%s': %lld nodes, a tree pass takes at most %d", tree,
			      1 + wv * dv, TF_TREE_MAX);
	sp->width = (int)wv;
	sp->depth = (int)dv;
	return 0;
}

int tf_draft_parse(tf_draft_spec *sp, const char *spec, const char *tree)
{
	const char *colon = strchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
	struct stat st;

	memset(sp, 0, sizeof *sp);
	if (len == 5 && !strncmp(spec, "ngram", 5)) {
		long long n = colon ? number(colon + 1, 1, TF_NGRAM_MAX) : 3;
		if (n < 0)
			return tf_err("bad drafter '%s': ngram:N takes an n-gram of 1 to %d ids", spec, TF_NGRAM_MAX);
		sp->kind = TF_DRAFT_NGRAM;
		sp->n = (int)n;
	} else if (len == 6 && !strncmp(spec, "random", 6)) {
		long long seed = colon ? number(colon + 1, 0, ~0ull >> 1) : 0;
		if (seed < 0)
			return tf_err("bad drafter '%s': random:SEED takes a seed of 0 or more", spec);
		sp->kind = TF_DRAFT_RANDOM;
		sp->seed = (uint64_t)seed;
	} else if (len == 3 && !strncmp(spec, "mtp", 3)) {
		long long k = colon ? number(colon + 1, 1, TF_DRAFT_DEPTH_MAX) : TF_DRAFT_MTP_CHAIN;
		if (k < 0)
			return tf_err("bad drafter '%s': mtp:K takes a chain of 1 to %d ids", spec, TF_DRAFT_DEPTH_MAX);
		sp->kind = TF_DRAFT_MTP;
		if (parse_tree(sp, tree) < 0)
			return -1;
		if (sp->width == 1 && (!tree || !strcmp(tree, "off")))
			sp->depth = (int)k;
		return 0;
	} else if (!stat(spec, &st)) {
		/* a path names a drafter checkpoint, which no drafter here reads */
		return tf_err("drafter '%s' is a %s, and drafter checkpoints (DFlash) are not "
			      "supported: ngram[:N], mtp[:K] or random[:SEED]", spec, S_ISDIR(st.st_mode) ? "folder" : "file");
	} else {
		return tf_err("no drafter '%s': not ngram[:N], mtp[:K] or random[:SEED], nor a file or folder", spec);
	}
	return parse_tree(sp, tree);
}

const char *tf_draft_name(const tf_draft_spec *sp, char buf[96])
{
	char tree[40];

	if (sp->width == 1)
		snprintf(tree, sizeof tree, "chain of %d", sp->depth);
	else
		snprintf(tree, sizeof tree, "tree %dx%d", sp->width, sp->depth);
	if (sp->kind == TF_DRAFT_NGRAM)
		snprintf(buf, 96, "ngram:%d, %s", sp->n, tree);
	else if (sp->kind == TF_DRAFT_RANDOM)
		snprintf(buf, 96, "random:%llu, %s", (unsigned long long)sp->seed, tree);
	else if (sp->kind == TF_DRAFT_MTP)
		snprintf(buf, 96, "mtp, %s", tree);
	else
		snprintf(buf, 96, "none");
	return buf;
}
