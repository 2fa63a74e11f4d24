/* tok_pre.c: Split and ByteLevel pre-tokenizer steps over PCRE2 */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "tok_pre.h"
#include "tok_regex.h"

/* GPT-2's word regex, what ByteLevel splits with when use_regex is set */
static const char gpt2_regex[] =
	"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

void tf_pretok_init(tf_pretok *p)
{
	memset(p, 0, sizeof *p);
	/* matches of \s+ over a long run of blanks backtrack deeply: give
	 * the JIT room up to 8 MiB rather than its 32 KiB default */
	p->jit = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, NULL);
	p->mctx = pcre2_match_context_create(NULL);
	p->md = pcre2_match_data_create(1, NULL);
	if (!p->jit || !p->mctx || !p->md)
		tf_die("out of memory creating a regex context");
	pcre2_jit_stack_assign(p->mctx, NULL, p->jit);
}

void tf_pretok_free(tf_pretok *p)
{
	for (int i = 0; i < p->n; i++) {
		pcre2_code_free(p->step[i].re);
		free(p->step[i].span);
		free(p->step[i].buf);
	}
	pcre2_match_data_free(p->md);
	pcre2_match_context_free(p->mctx);
	pcre2_jit_stack_free(p->jit);
	memset(p, 0, sizeof *p);
}

static tf_pre_step *new_step(tf_pretok *p)
{
	if (p->n == (int)(sizeof p->step / sizeof p->step[0])) {
		tf_err("too many pre-tokenizer steps (at most %d)", p->n);
		return NULL;
	}
	memset(&p->step[p->n], 0, sizeof p->step[0]);
	return &p->step[p->n];
}

int tf_pretok_add_split(tf_pretok *p, const char *pat, size_t len, int literal, int behavior, int invert)
{
	tf_pre_step *s = new_step(p);

	if (!s || !(s->re = tf_regex_compile(pat, len, literal)))
		return -1;
	s->behavior = behavior;
	s->invert = invert;
	p->n++;
	return 0;
}

int tf_pretok_add_bytelevel(tf_pretok *p, int prefix_space, int use_regex)
{
	tf_pre_step *s = new_step(p);

	if (!s || (use_regex && !(s->re = tf_regex_compile(gpt2_regex, strlen(gpt2_regex), 0))))
		return -1;
	s->bytelevel = 1;
	s->behavior = TF_SPLIT_ISOLATED;
	s->prefix_space = prefix_space;
	p->n++;
	return 0;
}

static int run_step(tf_pretok *p, int k, const char *t, size_t n, tf_word_fn fn, void *ctx);

/* one span of step k: Isolated and Removed steps pass it on at once (so a
 * long text needs no span list), the others collect it for behave() */
static int span(tf_pretok *p, int k, const char *t, size_t *ns, size_t start, size_t end, int match,
		tf_word_fn fn, void *ctx)
{
	tf_pre_step *s = &p->step[k];

	if (s->invert)
		match = !match;
	if (s->behavior == TF_SPLIT_ISOLATED || s->behavior == TF_SPLIT_REMOVED) {
		if (match && s->behavior == TF_SPLIT_REMOVED)
			return 0;
		return run_step(p, k + 1, t + start, end - start, fn, ctx);
	}
	if (*ns == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->span = tf_realloc(s->span, s->cap * sizeof *s->span);
	}
	s->span[(*ns)++] = (tf_span){ start, end, match };
	return 0;
}

/* the matches of step k's regex over t[0..n) and the gaps between them, in
 * order. An empty match right where the last match ended is skipped by
 * moving on one character, as the Oniguruma iterator of Hugging Face
 * tokenizers does. Returns the number of spans collected, -1 on error. */
static long find_spans(tf_pretok *p, int k, const char *t, size_t n, tf_word_fn fn, void *ctx)
{
	tf_pre_step *s = &p->step[k];
	size_t ns = 0, from = 0, prev = 0, last_end = (size_t)-1;

	while (from <= n) {
		/* a run of L blanks costs the Qwen regex's \s*[\r\n]+ some L
		 * steps of backtracking before \s+(?!\S) takes it whole: the
		 * limit grows with what is left, so 10 million blanks are one
		 * word as in tokenizers, while a pattern that goes quadratic
		 * still stops */
		pcre2_set_match_limit(p->mctx, 10000000u + 8u * (uint32_t)((n - from) < (1u << 28) ? n - from : 1u << 28));
		int rc = pcre2_match(s->re, (PCRE2_SPTR)t, n, from, PCRE2_NO_UTF_CHECK, p->md, p->mctx);
		PCRE2_SIZE *ov, m0, m1;

		if (rc == PCRE2_ERROR_NOMATCH)
			break;
		if (rc < 0) {
			PCRE2_UCHAR msg[256];
			pcre2_get_error_message(rc, msg, sizeof msg);
			return tf_err("pre-tokenizer regex failed at byte %zu: %s", from, (char *)msg);
		}
		ov = pcre2_get_ovector_pointer(p->md);
		m0 = ov[0];
		m1 = ov[1];
		if (m0 == m1 && m1 == last_end) {
			if (from >= n)
				break;
			from++;
			while (from < n && ((unsigned char)t[from] & 0xc0) == 0x80)
				from++;
			continue;
		}
		/* the match data is reused by the steps run from span() */
		if (m0 > prev && span(p, k, t, &ns, prev, m0, 0, fn, ctx) < 0)
			return -1;
		if (span(p, k, t, &ns, m0, m1, 1, fn, ctx) < 0)
			return -1;
		prev = last_end = from = m1;
	}
	if (prev < n && span(p, k, t, &ns, prev, n, 0, fn, ctx) < 0)
		return -1;
	return ns;
}

/* glues spans as the behavior says (Hugging Face's SplitDelimiterBehavior);
 * what stays has match = 0, what is removed has match = 1 */
static size_t behave(tf_pre_step *s, size_t ns)
{
	tf_span *sp = s->span;
	size_t out = 0;
	int prev = 0;

	switch (s->behavior) {
	case TF_SPLIT_REMOVED:
	case TF_SPLIT_ISOLATED:
		return ns;      /* passed on by span() already */
	case TF_SPLIT_CONTIGUOUS:
	case TF_SPLIT_MERGED_PREV:
		for (size_t i = 0; i < ns; i++) {
			int m = sp[i].match, glue = s->behavior == TF_SPLIT_CONTIGUOUS ? m == prev : m && !prev;
			if (glue && out)
				sp[out - 1].end = sp[i].end;
			else
				sp[out++] = (tf_span){ sp[i].start, sp[i].end, 0 };
			prev = m;
		}
		return out;
	case TF_SPLIT_MERGED_NEXT:
		/* right to left, gluing a match to the piece after it */
		out = ns;
		for (size_t i = ns; i-- > 0;) {
			int m = sp[i].match;
			if (m && !prev && out < ns)
				sp[out].start = sp[i].start;
			else
				sp[--out] = (tf_span){ sp[i].start, sp[i].end, 0 };
			prev = m;
		}
		memmove(sp, sp + out, (ns - out) * sizeof *sp);
		return ns - out;
	}
	return ns;
}

static int run_step(tf_pretok *p, int k, const char *t, size_t n, tf_word_fn fn, void *ctx)
{
	tf_pre_step *s;
	long ns;

	if (n == 0)
		return 0;       /* empty pieces are dropped, as in tokenizers */
	if (k == p->n)
		return fn(ctx, t, n);
	s = &p->step[k];
	if (s->prefix_space && t[0] != ' ') {
		if (n + 1 > s->buf_cap) {
			s->buf_cap = 2 * n + 64;
			s->buf = tf_realloc(s->buf, s->buf_cap);
		}
		s->buf[0] = ' ';
		memcpy(s->buf + 1, t, n);
		t = s->buf;
		n++;
	}
	if (!s->re)
		return run_step(p, k + 1, t, n, fn, ctx);
	if ((ns = find_spans(p, k, t, n, fn, ctx)) < 0)
		return -1;
	ns = behave(s, ns);
	/* the spans live in this step's scratch, which the steps after it
	 * never touch, so they stay valid through the recursion (and the
	 * prefixed copy in s->buf likewise) */
	for (long i = 0; i < ns; i++)
		if (!s->span[i].match &&
		    run_step(p, k + 1, t + s->span[i].start, s->span[i].end - s->span[i].start, fn, ctx) < 0)
			return -1;
	return 0;
}

int tf_pretok_run(tf_pretok *p, const char *s, size_t n, tf_word_fn fn, void *ctx)
{
	return run_step(p, 0, s, n, fn, ctx);
}
