/*
 * tok_pre.h: the pre-tokenizer, the step before BPE.
 *
 * It cuts normalized text into words that BPE encodes one by one: Split
 * steps run a regex from tokenizer.json through PCRE2 (UTF, Unicode
 * properties, JIT) and keep, drop or glue the matches as the step's
 * behavior says; the ByteLevel step may prepend a space and split with the
 * GPT-2 regex. The byte-to-character mapping of ByteLevel is left to the
 * encoder, which works on the words' bytes.
 */
#ifndef TF_TOK_PRE_H
#define TF_TOK_PRE_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stddef.h>

enum { TF_SPLIT_REMOVED, TF_SPLIT_ISOLATED, TF_SPLIT_MERGED_PREV, TF_SPLIT_MERGED_NEXT,
       TF_SPLIT_CONTIGUOUS };

typedef struct {
	size_t start, end;
	int match;              /* a regex match (1) or the text between (0) */
} tf_span;

typedef struct {
	int bytelevel;          /* 0: Split step, 1: ByteLevel step */
	pcre2_code *re;         /* Split's pattern, or ByteLevel's GPT-2 regex; NULL = none */
	int behavior, invert;   /* Split */
	int prefix_space;       /* ByteLevel add_prefix_space */
	tf_span *span;          /* (cap) scratch: the pieces of one input */
	size_t cap;
	char *buf;              /* (buf_cap) scratch: " " + input for prefix_space */
	size_t buf_cap;
} tf_pre_step;

typedef struct {
	tf_pre_step step[8];
	int n;
	pcre2_match_data *md;
	pcre2_match_context *mctx;
	pcre2_jit_stack *jit;
} tf_pretok;

void tf_pretok_init(tf_pretok *p);
void tf_pretok_free(tf_pretok *p);
/* a Split step; pattern is a regex, or a literal string when literal */
int tf_pretok_add_split(tf_pretok *p, const char *pat, size_t len, int literal, int behavior,
			int invert);
int tf_pretok_add_bytelevel(tf_pretok *p, int prefix_space, int use_regex);

/* called for every word, in order; returns 0, or -1 to stop with an error */
typedef int (*tf_word_fn)(void *ctx, const char *s, size_t n);
/* cuts s[0..n) (valid UTF-8) into words; -1 on error */
int tf_pretok_run(tf_pretok *p, const char *s, size_t n, tf_word_fn fn, void *ctx);

#endif
