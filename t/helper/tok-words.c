/*
 * tok-words: the words the pre-tokenizer cuts a text into.
 *
 *   tok-words MODEL FILE
 *   tok-words --unknown
 *
 * For each line of FILE (without its newline): the line is normalized and
 * cut by the pre-tokenizer of MODEL's tokenizer.json, and the words are
 * printed on one line as hex bytes separated by blanks. Added tokens are not
 * looked for. tok-hf.py pretok prints the same from Hugging Face tokenizers.
 *
 * --unknown lists the code points (hex, one a line) that PCRE2's Unicode
 * tables leave unassigned (\p{Cn}), with the tables' Unicode version on
 * stderr: the regex cannot class characters newer than its tables.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/utf8.h"
#include "tok/tok.h"

static int print_word(void *ctx, const char *s, size_t n)
{
	int *first = ctx;

	if (!*first)
		putchar(' ');
	*first = 0;
	for (size_t i = 0; i < n; i++)
		printf("%02x", (unsigned char)s[i]);
	return 0;
}

static int unknown(void)
{
	char ver[32];
	int err;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR) "\\p{Cn}", PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
				       &err, &off, NULL);
	pcre2_match_data *md = pcre2_match_data_create(1, NULL);
	long n = 0;

	pcre2_config(PCRE2_CONFIG_UNICODE_VERSION, ver);
	for (int32_t c = 0; c < 0x110000; c++) {
		char s[4];
		int len;
		if (c >= 0xd800 && c < 0xe000)
			continue;
		len = tf_utf8_put(s, c);
		if (pcre2_match(re, (PCRE2_SPTR)s, len, 0, 0, md, NULL) >= 0) {
			printf("%x\n", c);
			n++;
		}
	}
	fprintf(stderr, "PCRE2 Unicode %s: %ld code points unassigned\n", ver, n);
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return 0;
}

int main(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	tf_tok *t;

	tf_prog = "tok-words";
	if (argc == 2 && !strcmp(argv[1], "--unknown"))
		return unknown();
	if (argc != 3) {
		fprintf(stderr, "usage: tok-words MODEL FILE | --unknown\n");
		return 2;
	}
	if (!(t = tf_tok_load(argv[1])))
		tf_die_err();
	if (!(f = fopen(argv[2], "rb")))
		tf_die("cannot open '%s':", argv[2]);
	while ((n = getline(&line, &cap, f)) >= 0) {
		const char *norm;
		long len;
		int first = 1;

		if (n && line[n - 1] == '\n')
			n--;
		if (tf_utf8_valid(line, n) != (size_t)n)
			tf_die("'%s': not valid UTF-8", argv[2]);
		if ((len = tf_norm_apply(&t->norm, line, n, &norm)) < 0 ||
		    tf_pretok_run(&t->pre, norm, len, print_word, &first) < 0)
			tf_die_err();
		putchar('\n');
	}
	free(line);
	fclose(f);
	tf_tok_free(t);
	return 0;
}
