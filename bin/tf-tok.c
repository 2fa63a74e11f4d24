/*
 * tf-tok: text to token ids and back, with a model's tokenizer.json.
 *
 *   tf-tok encode MODEL < text > ids
 *   tf-tok decode MODEL < ids > text
 *
 * decode is a stream: it reads with read(2) and writes each token's bytes
 * as soon as its id is complete, so text from `tf-run --stream` appears as
 * it is generated.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "io/ids.h"
#include "io/out.h"
#include "io/rec.h"
#include "tok/tok.h"
#include "tok/tok_chat.h"
#include "tok/tok_dec.h"

#ifndef TF_VERSION
#define TF_VERSION "0.1.0"
#endif

static const char usage_text[] =
	"usage: tf-tok encode [-l] [-c] MODEL [FILE]\n"
	"       tf-tok decode [-l] [-s] MODEL [FILE]\n"
	"\n"
	"encode: FILE (default stdin) as one text -> one line of token ids\n"
	"decode: each line of ids -> its text, written as the ids arrive\n"
	"MODEL is a folder with tokenizer.json, a bundle that carries it, or the file.\n"
	"\n"
	"  -l, --lines          one sequence per line: encode each input line\n"
	"                       (without its newline); decode ends each text with one\n"
	"  -c, --chat           encode: wrap the text in a ChatML user turn\n"
	"  -s, --skip-special   decode: leave special tokens out\n"
	"  -h, --help           show this help\n"
	"  -V, --version        show the version\n";

static int opt_lines, opt_chat, opt_skip;

static void put_ids(const tf_seq *s)
{
	for (size_t i = 0; i < s->n; i++)
		printf(i ? " %d" : "%d", s->ids[i]);
	putchar('\n');
}

/* encodes text[0..n), wrapped for --chat; where names the input in errors */
static void encode_one(tf_tok *t, const char *text, size_t n, const char *where)
{
	tf_seq s = { 0 };

	if ((opt_chat ? tf_tok_encode_chat(t, text, n, &s) : tf_tok_encode(t, text, n, &s)) < 0) {
		tf_errpre("%s", where);
		tf_die_err();
	}
	put_ids(&s);
	tf_seq_free(&s);
}

static void encode(tf_tok *t, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	char *text = NULL, where[64 + 4096];
	size_t len = 0, cap = 0;
	struct stat st;

	if (!f)
		tf_die("cannot open '%s':", path);
	if (opt_chat && !tf_tok_has_chat(t))
		tf_die("'%s' has no <|im_start|> and <|im_end|> tokens for --chat", t->name);
	if (opt_lines) {
		/* a pipe gets each line's ids as soon as the line is read */
		int stream = fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode);
		ssize_t n;
		long line = 0;

		while ((n = getline(&text, &cap, f)) >= 0) {
			line++;
			if (n && text[n - 1] == '\n')
				n--;
			snprintf(where, sizeof where, "'%s' line %ld", path, line);
			encode_one(t, text, n, where);
			if (stream && fflush(stdout))
				tf_die("write to stdout:");
		}
	} else {
		size_t got;
		cap = 1 << 16;
		text = tf_malloc(cap);
		while ((got = fread(text + len, 1, cap - len, f)) > 0) {
			len += got;
			if (len == cap)
				text = tf_realloc(text, cap *= 2);
		}
		snprintf(where, sizeof where, "'%s'", path);
		if (!ferror(f))
			encode_one(t, text, len, where);
	}
	if (ferror(f))
		tf_die("cannot read '%s':", path);
	free(text);
	if (f != stdin)
		fclose(f);
}

/* decoding state: the text of the current line goes out through d */
typedef struct {
	tf_tok *t;
	tf_detok d;
	const char *name;
	const char *unit;       /* "line", or "record" for tf-records input */
	long line;
} dec_state;

static void emit(dec_state *st, long long id)
{
	size_t n;
	const char *p;

	if (id < 0 || id >= st->t->n_vocab)
		tf_die("'%s'%s %s %ld: id %lld is out of range (vocab_size %ld)", st->name,
		       strcmp(st->unit, "line") ? ":" : "", st->unit, st->line, id,
		       st->t->n_vocab);
	if (!(p = tf_tok_piece(st->t, id, &n)))
		tf_die("'%s'%s %s %ld: id %lld has no token in '%s'", st->name, strcmp(st->unit, "line") ? ":" : "",
		       st->unit, st->line, id, st->t->name);
	if (opt_skip && tf_tok_special(st->t, id))
		return;
	if (tf_detok_put(&st->d, p, n) < 0)
		tf_die_err();
}

static void end_text(dec_state *st)
{
	if (tf_detok_end(&st->d) < 0)
		tf_die_err();
	if (opt_lines && putchar('\n') == EOF)
		tf_die("write to stdout:");
}

static void flush_out(void)
{
	if (fflush(stdout))
		tf_die("write to stdout:");
}

/* a tf-records(5) ids stream; first[0..8) is already read */
static void decode_records(dec_state *st, FILE *f, const unsigned char *first)
{
	tf_ids_reader r;
	tf_seq s = { 0 };
	tf_rec rec;
	int rc;

	if (tf_rec_read_after(f, st->name, first, &rec) < 0)
		tf_die_err();
	if (rec.kind != TF_REC_IDS || rec.dtype != TF_DT_I32)
		tf_die("'%s': record 0 is not an ids record", st->name);
	st->unit = "record";    /* numbered by the header's sequence, as tf_ids_next does */
	st->line = rec.seq;
	for (size_t i = 0; i < (size_t)rec.rows * rec.cols; i++)
		emit(st, ((int32_t *)rec.data)[i]);
	end_text(st);
	flush_out();
	tf_rec_free(&rec);
	tf_ids_open(&r, f, st->name);
	r.binary = 1;
	while ((rc = tf_ids_next(&r, &s, st->t->n_vocab)) > 0) {
		st->line++;
		for (size_t i = 0; i < s.n; i++)
			emit(st, s.ids[i]);
		end_text(st);
		flush_out();
	}
	if (rc < 0)
		tf_die_err();
	tf_seq_free(&s);
	tf_ids_close(&r);
}

static void decode(tf_tok *t, const char *path)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY) : 0;
	dec_state st = { .t = t, .name = path, .unit = "line", .line = 1 };
	char buf[1 << 16];
	tf_ids_lex x;
	int64_t id;
	int got, first = 1;

	if (fd < 0)
		tf_die("cannot open '%s':", path);
	tf_detok_init(&st.d, stdout);
	tf_ids_lex_init(&x);
	for (;;) {
		/* the first byte alone: 0x89 starts a records stream, which is
		 * then read through stdio from the byte after it */
		ssize_t n = read(fd, buf, first ? 1 : sizeof buf);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			tf_die("cannot read '%s':", path);
		if (n == 0)
			break;
		if (first && (unsigned char)buf[0] == 0x89) {
			unsigned char head[8] = { 0x89 };
			FILE *f = fd ? fdopen(fd, "rb") : stdin;
			if (!f)
				tf_die("cannot read '%s':", path);
			if (fread(head + 1, 1, 7, f) != 7)
				tf_die("'%s': truncated record header", path);
			decode_records(&st, f, head);
			return;
		}
		first = 0;
		for (ssize_t i = 0; i < n; i++) {
			unsigned char c = buf[i];

			got = tf_ids_lex_byte(&x, c, &id);
			if (got & TF_IDS_BAD)
				tf_die("'%s' line %ld: '%c' in a line of token ids", path, st.line,
				       c >= 0x20 && c < 0x7f ? c : '?');
			if (got & TF_IDS_ID)
				emit(&st, id);
			if (got & TF_IDS_EOL) {
				/* a comment-only line is no text; a blank one is the
				 * empty text */
				if (x.line_ids || !x.line_comment)
					end_text(&st);
				st.line++;
			}
		}
		flush_out();
	}
	got = tf_ids_lex_byte(&x, EOF, &id);
	if (got & TF_IDS_ID)
		emit(&st, id);
	if (got & TF_IDS_EOL)
		end_text(&st);
	flush_out();
	if (fd)
		close(fd);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "lines", no_argument, NULL, 'l' },
		{ "chat", no_argument, NULL, 'c' },
		{ "skip-special", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd, *file;
	tf_tok *t;
	int c;

	tf_prog = "tf-tok";
	tf_out_init();
	while ((c = getopt_long(argc, argv, "lcshV", longopts, NULL)) != -1) {
		switch (c) {
		case 'l': opt_lines = 1; break;
		case 'c': opt_chat = 1; break;
		case 's': opt_skip = 1; break;
		case 'h': fputs(usage_text, stdout); return tf_stdout_exit();
		case 'V': puts("tf-tok " TF_VERSION); return tf_stdout_exit();
		default: tf_usage_die("unknown option");
		}
	}
	if (argc - optind < 2 || argc - optind > 3)
		tf_usage_die("need a command and a MODEL");
	cmd = argv[optind];
	file = argc - optind == 3 ? argv[optind + 2] : "-";
	if (strcmp(cmd, "encode") && strcmp(cmd, "decode"))
		tf_usage_die("unknown command '%s' (encode or decode)", cmd);
	if (!strcmp(cmd, "encode") && opt_skip)
		tf_usage_die("--skip-special is for decode");
	if (!strcmp(cmd, "decode") && opt_chat)
		tf_usage_die("--chat is for encode");
	if (!(t = tf_tok_load(argv[optind + 1])))
		tf_die_err();
	if (!strcmp(cmd, "encode"))
		encode(t, file);
	else
		decode(t, file);
	tf_tok_free(t);
	if (tf_stdout_close() < 0)
		tf_die_err();
	return 0;
}
