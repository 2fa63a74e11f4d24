/* ids: token ids as text lines and as ids records */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "io/ids.h"
#include "io/rec.h"
#include "tap.h"

static FILE *stream(const void *p, size_t n)
{
	FILE *f = tmpfile();

	if (!f || fwrite(p, 1, n, f) != n)
		abort();
	rewind(f);
	return f;
}

/* reads every sequence of the n bytes at p into "a b c|d e|" form; returns
 * the last tf_ids_next result (0 at a clean end, -1 on error) */
static int read_all(const void *p, size_t n, long vocab, char *out, size_t cap)
{
	FILE *f = stream(p, n);
	tf_ids_reader r;
	tf_seq s = { 0 };
	size_t used = 0;
	int rc;

	out[0] = 0;
	tf_ids_open(&r, f, "ids");
	while ((rc = tf_ids_next(&r, &s, vocab)) > 0) {
		for (size_t i = 0; i < s.n; i++)
			used += snprintf(out + used, cap - used, "%s%d", i ? " " : "", s.ids[i]);
		used += snprintf(out + used, cap - used, "|");
	}
	tf_seq_free(&s);
	tf_ids_close(&r);
	fclose(f);
	return rc;
}

static int reads(const char *text, long vocab, const char *want)
{
	char got[1024];
	int rc = read_all(text, strlen(text), vocab, got, sizeof got);

	if (rc != 0 || strcmp(got, want)) {
		diag("rc %d (%s), got '%s', wanted '%s'", rc, rc ? tf_errmsg() : "", got, want);
		return 0;
	}
	return 1;
}

static int fails(const void *p, size_t n, long vocab, const char *want)
{
	char got[1024];
	int rc = read_all(p, n, vocab, got, sizeof got);

	if (rc != -1 || !strstr(tf_errmsg(), want)) {
		diag("rc %d, message '%s', wanted '%s'", rc, tf_errmsg(), want);
		return 0;
	}
	return 1;
}

#define FAILS(text, vocab, want) fails(text, sizeof(text) - 1, vocab, want)

/* ids records for the sequences (n ids each) into a stream */
static FILE *records(int nseq, const int32_t *const *seqs, const uint32_t *n)
{
	FILE *f = tmpfile();

	for (int i = 0; i < nseq; i++)
		if (tf_rec_write(f, TF_REC_IDS, TF_DT_I32, n[i], 1, i, 0, seqs[i]) < 0)
			abort();
	rewind(f);
	return f;
}

static size_t slurp(FILE *f, char *buf, size_t cap)
{
	size_t n;

	rewind(f);
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

int main(void)
{
	char bin[4096];
	size_t n;

	/* text */
	ok(reads("1 2 3\n4\n", 0, "1 2 3|4|"), "one sequence a line");
	ok(reads("1 2 3", 0, "1 2 3|"), "no newline at the end");
	ok(reads("", 0, ""), "empty input");
	ok(reads("# a comment\n\n  \t\n1 2 # trailing comment\n#\n3\n", 0, "||1 2|3|"),
	   "comment lines skipped, blank lines empty sequences");
	ok(reads("12#x\n", 0, "12|"), "comment right after an id");
	ok(reads("1 2\r\n3\r\n\r\n", 0, "1 2|3||"), "CRLF line ends, a blank CRLF line");
	ok(reads("\t 5\t6  7 \n", 0, "5 6 7|"), "tabs and runs of blanks");
	ok(reads("007 0\n", 0, "7 0|"), "leading zeros, id 0");
	ok(reads("2147483647\n", 0, "2147483647|"), "largest int32 id without a vocab");
	ok(reads("9 10 11\n", 12, "9 10 11|"), "ids below vocab");

	ok(FAILS("1 2x 3\n", 0, "'ids' line 1: '2x' is not a token id"), "a word with letters");
	ok(FAILS("1\n2\n\n-1\n", 0, "line 4: '-1' is not a token id"), "negative id, line counted");
	ok(FAILS("+1\n", 0, "'+1' is not a token id"), "plus sign");
	ok(FAILS("1.5\n", 0, "'1.5' is not a token id"), "decimal point");
	ok(FAILS("0x10\n", 0, "'0x10' is not a token id"), "hex");
	ok(FAILS("hello world\n", 0, "'hello' is not a token id"), "prose");
	ok(FAILS("1,2\n", 0, "'1,2' is not a token id"), "comma separated");
	ok(FAILS("1 \x01\x7f\xff 2\n", 0, "'\?\?\?' is not a token id"), "control bytes are not echoed raw");
	ok(FAILS("5 10 11 12\n", 10, "line 1: id 10 is out of range (vocab_size 10)"),
	   "id at vocab_size, message names only that id");
	ok(FAILS("2147483648\n", 0, "id 2147483648 is out of range"), "past int32");
	ok(FAILS("99999999999999999999999999\n", 0, "is out of range"), "past long, not 'not a token id'");
	ok(fails("1 2\0 3\n", 7, 0, "line 1: NUL byte"), "NUL byte");

	/* binary ids records */
	{
		static const int32_t s0[] = { 1, 2, 3 }, s1[] = { 0 }, s2[] = { 5, 9 };
		const int32_t *seqs[] = { s0, s1, s2 };
		const uint32_t len[] = { 3, 1, 2 };
		char got[256];

		n = slurp(records(3, seqs, len), bin, sizeof bin);
		ok(read_all(bin, n, 10, got, sizeof got) == 0 && !strcmp(got, "1 2 3|0|5 9|"),
		   "ids records: one sequence each");
		ok(fails(bin, n, 9, "record 2: id 9 is out of range (vocab_size 9)"), "record id at vocab_size");
		ok(fails(bin, n - 1, 0, "truncated record 2: got 7 of 8"), "truncated ids record");
		ok(fails(bin, 40, 0, "truncated record header: got 40 of 48"), "truncated first header");
		ok(fails(bin, 1, 0, "truncated record header: got 1 of 48"), "a lone 0x89");
	}
	{
		static const int32_t neg[] = { 4, -3 };
		const int32_t *seqs[] = { neg };
		const uint32_t len[] = { 2 };

		n = slurp(records(1, seqs, len), bin, sizeof bin);
		ok(fails(bin, n, 0, "record 0: id -3 is negative"), "negative id in a record");
	}
	{
		FILE *f = tmpfile();
		float x[4] = { 0 };
		int32_t two[4] = { 1, 2, 3, 4 };

		tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 1, 4, 0, 0, x);
		n = slurp(f, bin, sizeof bin);
		ok(fails(bin, n, 0, "record 0 is not an ids record"), "logits record where ids are expected");
		f = tmpfile();
		tf_rec_write(f, TF_REC_IDS, TF_DT_I32, 2, 2, 0, 0, two);
		n = slurp(f, bin, sizeof bin);
		ok(fails(bin, n, 0, "has 2 values a row (need 1)"), "ids record with two columns");
	}
	ok(FAILS("\x89TFR nope\n and more bytes to fill a header up past 48.......\n", 0, "bad magic"),
	   "0x89 then not the magic");

	/* whole files */
	{
		const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
		char path[4096];
		int fd;
		const char text[] = "3 4\n# c\n5\n";
		tf_seq *v = NULL;
		long k;

		snprintf(path, sizeof path, "%s/ids.XXXXXX", dir);
		fd = mkstemp(path);
		ok(fd >= 0 && write(fd, text, sizeof text - 1) == (ssize_t)sizeof text - 1, "temp file");
		close(fd);
		k = tf_ids_load(path, &v, 0);
		ok(k == 2 && v[0].n == 2 && v[0].ids[0] == 3 && v[0].ids[1] == 4 && v[1].n == 1 && v[1].ids[0] == 5,
		   "tf_ids_load reads every sequence");
		for (long i = 0; i < k; i++)
			tf_seq_free(&v[i]);
		free(v);
		ok(tf_ids_load(path, &v, 5) == -1 && strstr(tf_errmsg(), "line 3: id 5 is out of range"),
		   "tf_ids_load passes the error on");
		unlink(path);
		ok(tf_ids_load(path, &v, 0) == -1 && strstr(tf_errmsg(), "cannot open") &&
		   strstr(tf_errmsg(), "No such file"), "missing file: %s", tf_errmsg());
	}
	return done();
}
