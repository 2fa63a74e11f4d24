/* ids.c: token-id sequences from text lines or binary records */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "ids.h"
#include "rec.h"

void tf_seq_push(tf_seq *s, int32_t id)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->ids = tf_realloc(s->ids, s->cap * sizeof *s->ids);
	}
	s->ids[s->n++] = id;
}

void tf_seq_free(tf_seq *s)
{
	free(s->ids);
	memset(s, 0, sizeof *s);
}

void tf_ids_open(tf_ids_reader *r, FILE *f, const char *name)
{
	memset(r, 0, sizeof *r);
	r->f = f;
	r->name = name;
	r->binary = -1;
}

void tf_ids_close(tf_ids_reader *r)
{
	free(r->buf);
	r->buf = NULL;
}

static int next_binary(tf_ids_reader *r, tf_seq *s, long vocab)
{
	tf_rec rec;
	int rc = tf_rec_read(r->f, r->name, &rec);

	if (rc <= 0)
		return rc;
	if (rec.kind != TF_REC_IDS) {
		tf_rec_free(&rec);
		return tf_err("'%s': record %llu is not an ids record", r->name, (unsigned long long)rec.seq);
	}
	if (rec.cols != 1) {
		tf_rec_free(&rec);
		return tf_err("'%s': ids record %llu has %u values a row (need 1)", r->name,
			      (unsigned long long)rec.seq, rec.cols);
	}
	s->n = 0;
	for (size_t i = 0; i < rec.rows; i++) {
		int32_t id = ((int32_t *)rec.data)[i];
		if (id < 0 || (vocab && id >= vocab)) {
			tf_rec_free(&rec);
			if (id < 0)
				return tf_err("'%s': record %llu: id %d is negative", r->name,
					      (unsigned long long)rec.seq, id);
			return tf_err("'%s': record %llu: id %d is out of range (vocab_size %ld)", r->name,
				      (unsigned long long)rec.seq, id, vocab);
		}
		tf_seq_push(s, id);
	}
	tf_rec_free(&rec);
	r->line++;
	return 1;
}

/* copies at most 40 bytes of a bad word for a message, with bytes that are
 * not printable ASCII shown as '?' so binary input cannot garble a terminal */
static const char *shown(const char *p, size_t n, char *buf)
{
	size_t i;

	if (n > 40)
		n = 40;
	for (i = 0; i < n; i++)
		buf[i] = p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?';
	buf[i] = 0;
	return buf;
}

void tf_ids_lex_init(tf_ids_lex *x)
{
	*x = (tf_ids_lex){ .id = -1 };
}

int tf_ids_lex_byte(tf_ids_lex *x, int c, int64_t *id)
{
	int got = 0;

	if (x->comment && c != '\n' && c != EOF)
		return 0;
	if (c >= '0' && c <= '9') {
		x->id = (x->id < 0 ? 0 : x->id) * 10 + (c - '0');
		if (x->id > INT32_MAX)
			x->id = (int64_t)INT32_MAX + 1;    /* out of range all the same */
		x->ids = 1;
		return 0;
	}
	if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '#' && c != EOF)
		return TF_IDS_BAD;
	if (x->id >= 0) {
		*id = x->id;
		got = TF_IDS_ID;
	}
	x->id = -1;
	if (c == '#')
		x->comment = 1;
	if (c == '\n' || (c == EOF && x->ids)) {
		x->line_ids = x->ids;
		x->line_comment = x->comment;
		x->ids = x->comment = 0;
		got |= TF_IDS_EOL;
	}
	return got;
}

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int tf_ids_parse(const char *name, long line, const char *p, size_t len, tf_seq *s, long vocab)
{
	tf_ids_lex x;
	char word[41];

	tf_ids_lex_init(&x);
	s->n = 0;
	for (size_t i = 0; i <= len; i++) {
		int64_t id;
		int got = tf_ids_lex_byte(&x, i < len ? (unsigned char)p[i] : EOF, &id);
		size_t b = i, e = i;

		if (got & TF_IDS_BAD) {
			/* the whole word the byte is in */
			while (b > 0 && !blank(p[b - 1]))
				b--;
			while (e < len && !blank(p[e]))
				e++;
			return tf_err("'%s' line %ld: '%s' is not a token id", name, line,
				      shown(p + b, e - b, word));
		}
		if (!(got & TF_IDS_ID))
			continue;
		if (id > INT32_MAX || (vocab && id >= vocab)) {
			while (b > 0 && isdigit((unsigned char)p[b - 1]))
				b--;
			return tf_err("'%s' line %ld: id %s is out of range (vocab_size %ld)", name, line,
				      shown(p + b, e - b, word), vocab);
		}
		tf_seq_push(s, (int32_t)id);
	}
	return !s->n && (x.line_comment || x.comment);
}

int tf_ids_next(tf_ids_reader *r, tf_seq *s, long vocab)
{
	if (r->binary < 0) {
		int c = getc(r->f);
		if (c == EOF)
			return ferror(r->f) ? tf_err("cannot read '%s':", r->name) : 0;
		/* the first byte of the record magic; one byte of push-back is
		 * all stdio promises, and all this needs */
		ungetc(c, r->f);
		r->binary = c == 0x89;
	}
	if (r->binary)
		return next_binary(r, s, vocab);
	for (;;) {
		ssize_t len = getline(&r->buf, &r->cap, r->f);

		if (len < 0)
			return ferror(r->f) ? tf_err("cannot read '%s':", r->name) : 0;
		r->line++;
		if (memchr(r->buf, 0, len))
			return tf_err("'%s' line %ld: NUL byte in text ids", r->name, r->line);
		int rc = tf_ids_parse(r->name, r->line, r->buf, len, s, vocab);
		if (rc < 0)
			return -1;
		/* a blank line is a sequence of no ids, so that whatever answers
		 * line by line stays in step with its input */
		if (!rc)
			return 1;
	}
}

long tf_ids_load(const char *path, tf_seq **out, long vocab)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	tf_ids_reader r;
	tf_seq *v = NULL, s = { 0 };
	long n = 0, cap = 0;
	int rc;

	if (!f)
		return tf_err("cannot open '%s':", path);
	tf_ids_open(&r, f, path);
	while ((rc = tf_ids_next(&r, &s, vocab)) > 0) {
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			v = tf_realloc(v, cap * sizeof *v);
		}
		/* the sequence moves into the list; the reader starts a new one */
		v[n++] = s;
		s = (tf_seq){ 0 };
	}
	tf_seq_free(&s);
	tf_ids_close(&r);
	if (f != stdin)
		fclose(f);
	if (rc < 0) {
		for (long i = 0; i < n; i++)
			tf_seq_free(&v[i]);
		free(v);
		return -1;
	}
	*out = v;
	return n;
}
