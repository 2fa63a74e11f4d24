/*
 * tok-parts: the tokenizer's pieces against simple references.
 *
 * UTF-8 validation against utf8proc's decoder; the stream writer on random
 * cuts of random bytes; BPE merging against the textbook loop (merge the
 * lowest-ranked adjacent pair, leftmost first, until none is left); the
 * vocab and word-cache hash tables against linear lists.
 */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "base/utf8.h"
#include "tap.h"
#include "tok/tok_bpe.h"
#include "tok/tok_cache.h"
#include "tok/tok_dec.h"
#include "tok/tok_vocab.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (rng >> 11) % n;
}

/* random bytes that are often UTF-8: whole characters of every length,
 * with now and then a stray, truncated or overlong sequence */
static size_t random_text(char *s, size_t max)
{
	size_t n = 0;

	while (n + 4 <= max && rnd(12)) {
		int32_t cp;
		switch (rnd(8)) {
		case 0: cp = rnd(0x80); break;
		case 1: cp = 0x80 + rnd(0x780); break;
		case 2: cp = 0x800 + rnd(0xf800); break;
		case 3: cp = 0x10000 + rnd(0x100000); break;
		case 4: s[n++] = 0x80 + rnd(0x80); continue;           /* stray continuation */
		case 5: s[n++] = 0xc0 + rnd(0x40); continue;           /* lone lead byte */
		case 6: s[n++] = 0xe0; s[n++] = 0x80 + rnd(0x20); continue;    /* overlong or short */
		default: s[n++] = 0xed; s[n++] = 0xa0 + rnd(0x20); s[n++] = 0x80; continue; /* surrogate */
		}
		if (cp >= 0xd800 && cp < 0xe000)
			cp = 'x';
		n += tf_utf8_put(s + n, cp);
	}
	return n;
}

/* the valid prefix by utf8proc, which rejects the same things */
static size_t ref_valid(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		utf8proc_int32_t cp;
		utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i, n - i, &cp);
		if (k <= 0)
			return i;
		i += k;
	}
	return n;
}

static void test_utf8(void)
{
	char s[256];
	int bad = 0;

	for (int t = 0; t < 20000; t++) {
		size_t n = random_text(s, sizeof s);
		if (tf_utf8_valid(s, n) != ref_valid(s, n))
			bad++;
	}
	ok(!bad, "tf_utf8_valid agrees with utf8proc on 20000 random texts (%d differ)", bad);
	ok(tf_utf8_valid("\xf4\x90\x80\x80", 4) == 0 && tf_utf8_valid("\xc0\xaf", 2) == 0 &&
	   tf_utf8_valid("\xef\xbf\xbf", 3) == 3, "past U+10FFFF and overlong are invalid, U+FFFF is valid");
	ok(tf_utf8_pending("a\xe2\x82", 3) == 2 && tf_utf8_pending("a\xe2\x82\xac", 4) == 0 &&
	   tf_utf8_pending("\xed\xa0", 2) == 0 && tf_utf8_pending("\xf0", 1) == 1,
	   "pending: an unfinished character is held, a complete or impossible one is not");
}

static void test_stream(void)
{
	char s[512];
	int lost = 0, split = 0;

	for (int t = 0; t < 5000; t++) {
		size_t n = random_text(s, sizeof s), at = 0, len = 0, valid = tf_utf8_valid(s, n) == n;
		char *out = NULL;
		FILE *f = open_memstream(&out, &len);
		tf_detok d;

		tf_detok_init(&d, f);
		while (at < n) {
			size_t k = 1 + rnd(6);
			if (k > n - at)
				k = n - at;
			tf_detok_put(&d, s + at, k);
			at += k;
			fflush(f);
			/* what is out so far never ends inside a character */
			if (valid && tf_utf8_valid(out, len) != len)
				split++;
		}
		tf_detok_end(&d);
		fclose(f);
		if (len != n || memcmp(out, s, n))
			lost++;
		free(out);
	}
	ok(!lost, "the stream writer puts out exactly its input, cut anywhere (%d differ)", lost);
	ok(!split, "on valid text it never stops inside a character (%d did)", split);
}

/* the textbook BPE loop over a rank table rank[a][b] (-1 = no merge) */
#define NSYM 24
#define NBASE 5         /* words are made of symbols 0..4; merges make the rest */
static int32_t rank_of[NSYM][NSYM], made[NSYM][NSYM];

static size_t ref_merge(int32_t *sym, size_t n)
{
	for (;;) {
		size_t best = n;
		for (size_t i = 0; i + 1 < n; i++)
			if (rank_of[sym[i]][sym[i + 1]] >= 0 &&
			    (best == n || rank_of[sym[i]][sym[i + 1]] < rank_of[sym[best]][sym[best + 1]]))
				best = i;
		if (best == n)
			return n;
		sym[best] = made[sym[best]][sym[best + 1]];
		memmove(sym + best + 1, sym + best + 2, (n - best - 2) * sizeof *sym);
		n--;
	}
}

static void test_bpe(void)
{
	int bad = 0;
	long merged = 0;

	for (int t = 0; t < 300; t++) {
		tf_bpe b;

		tf_bpe_init(&b);
		for (int i = 0; i < NSYM; i++)
			for (int j = 0; j < NSYM; j++)
				rank_of[i][j] = -1;
		/* as in a trained vocab, every token past the base symbols is
		 * made by one merge of two tokens before it, and ranks come in
		 * any order */
		for (int k = NBASE; k < NSYM; k++) {
			int i, j;
			do {
				i = rnd(k);
				j = rnd(k);
			} while (rank_of[i][j] >= 0);
			rank_of[i][j] = rnd(1000) * NSYM + k;
			made[i][j] = k;
			tf_bpe_add(&b, i, j, rank_of[i][j], k);
		}
		for (int w = 0; w < 50; w++) {
			int32_t a[64], r[64];
			size_t n = 1 + rnd(64), na, nr;
			for (size_t i = 0; i < n; i++)
				a[i] = r[i] = rnd(4) ? rnd(2) : rnd(NBASE);    /* repeats make ties */
			na = tf_bpe_merge(&b, a, n);
			nr = ref_merge(r, n);
			merged += n - nr;
			if (na != nr || memcmp(a, r, na * sizeof *a))
				bad++;
		}
		tf_bpe_free(&b);
	}
	ok(!bad && merged > 50000, "tf_bpe_merge equals the textbook loop on 15000 words, %ld merges (%d differ)",
	   merged, bad);
}

static void test_vocab(void)
{
	enum { N = 50000 };
	static char str[N][12];
	tf_vocab v;
	int bad = 0;

	tf_vocab_init(&v);
	for (int i = 0; i < N; i++) {
		snprintf(str[i], sizeof str[i], "t%x", (unsigned)(i * 2654435761u));
		tf_vocab_add(&v, str[i], strlen(str[i]), i);
	}
	tf_vocab_add(&v, str[7], strlen(str[7]), N);     /* given again: takes the new id */
	for (int i = 0; i < N; i++) {
		size_t len;
		const char *s = tf_vocab_str(&v, i, &len);
		int want = i == 7 ? N : i;
		if (tf_vocab_get(&v, str[i], strlen(str[i])) != want)
			bad++;
		if (i != 7 && (!s || len != strlen(str[i]) || memcmp(s, str[i], len)))
			bad++;
	}
	ok(!bad && tf_vocab_get(&v, "nope", 4) < 0 && !tf_vocab_str(&v, 7, &(size_t){ 0 }) &&
	   tf_vocab_get(&v, "", 0) < 0, "vocab: 50000 strings both ways, a string given twice, absent ones");
	tf_vocab_free(&v);
}

static void test_cache(void)
{
	tf_cache c;
	int bad = 0;

	tf_cache_init(&c);
	/* far more words than it holds: it empties itself and goes on */
	for (int i = 0; i < 200000; i++) {
		char w[16];
		int32_t ids[3] = { i, i + 1, i + 2 };
		const int32_t *got;
		size_t n = 0, len = snprintf(w, sizeof w, "w%d", i);
		tf_cache_put(&c, w, len, tf_hash(w, len), ids, 1 + i % 3);
		got = tf_cache_get(&c, w, len, tf_hash(w, len), &n);
		if (!got || n != (size_t)(1 + i % 3) || memcmp(got, ids, n * sizeof *ids))
			bad++;
	}
	ok(!bad, "cache: each word put is found with its ids, through many refills (%d missed)", bad);
	tf_cache_free(&c);
}

int main(void)
{
	plan(8);
	test_utf8();
	test_stream();
	test_bpe();
	test_vocab();
	test_cache();
	return done();
}
