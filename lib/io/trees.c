/* trees.c: prompts and token trees from text lines or records (trees.h) */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "model/tree.h"
#include "rec.h"
#include "trees.h"

void tf_items_open(tf_items_reader *r, FILE *f, const char *name)
{
	memset(r, 0, sizeof *r);
	r->f = f;
	r->name = name;
	r->binary = -1;
}

void tf_items_close(tf_items_reader *r)
{
	free(r->buf);
	r->buf = NULL;
}

void tf_item_free(tf_item *it)
{
	tf_seq_free(&it->id);
	tf_seq_free(&it->parent);
}

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* a decimal number p[0..len) of at most INT32_MAX, -1 alone if neg */
static int number(const char *p, size_t len, int neg, int64_t *v)
{
	if (neg && len == 2 && p[0] == '-' && p[1] == '1') {
		*v = -1;
		return 0;
	}
	*v = 0;
	if (!len || len > 10)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		*v = *v * 10 + (p[i] - '0');
	}
	return *v > INT32_MAX ? -1 : 0;
}

/* the ID:PARENT words of p[0..len) into it, up to a '#' */
static int parse_tree(const char *name, long line, const char *p, size_t len, tf_item *it)
{
	char shown[41];

	for (size_t i = 0; i < len && p[i] != '#';) {
		size_t b = i, e, colon;
		int64_t id, parent;

		if (blank(p[i])) {
			i++;
			continue;
		}
		for (e = b; e < len && !blank(p[e]) && p[e] != '#'; e++)
			;
		for (colon = b; colon < e && p[colon] != ':'; colon++)
			;
		if (colon == e || number(p + b, colon - b, 0, &id) < 0 ||
		    number(p + colon + 1, e - colon - 1, 1, &parent) < 0) {
			size_t n = e - b < 40 ? e - b : 40;
			for (size_t k = 0; k < n; k++)
				shown[k] = p[b + k] >= 0x20 && p[b + k] < 0x7f ? p[b + k] : '?';
			shown[n] = 0;
			return tf_err("'%s' line %ld: '%s' is not ID:PARENT (PARENT a node or -1)", name, line, shown);
		}
		tf_seq_push(&it->id, (int32_t)id);
		tf_seq_push(&it->parent, (int32_t)parent);
		i = e;
	}
	return 0;
}

/* whether line p[0..len) is a tree: a ':' before any comment */
static int tree_line(const char *p, size_t len)
{
	for (size_t i = 0; i < len && p[i] != '#'; i++)
		if (p[i] == ':')
			return 1;
	return 0;
}

static int next_text(tf_items_reader *r, tf_item *it, long vocab)
{
	for (;;) {
		ssize_t len = getline(&r->buf, &r->cap, r->f);

		if (len < 0)
			return ferror(r->f) ? tf_err("cannot read '%s':", r->name) : 0;
		r->where++;
		if (memchr(r->buf, 0, len))
			return tf_err("'%s' line %ld: NUL byte in text input", r->name, r->where);
		if (tree_line(r->buf, len)) {
			it->kind = TF_ITEM_TREE;
			return parse_tree(r->name, r->where, r->buf, len, it) < 0 ? -1 : 1;
		}
		int rc = tf_ids_parse(r->name, r->where, r->buf, len, &it->id, vocab);
		if (rc < 0)
			return -1;
		if (!rc) {
			it->kind = TF_ITEM_PROMPT;
			return 1;
		}
	}
}

static int next_binary(tf_items_reader *r, tf_item *it)
{
	tf_rec rec;
	int rc = tf_rec_read(r->f, r->name, &rec);
	const int32_t *v;

	if (rc <= 0)
		return rc;
	r->where++;
	v = rec.data;
	if (rec.kind == TF_REC_IDS && rec.cols == 1) {
		it->kind = TF_ITEM_PROMPT;
		for (uint32_t i = 0; i < rec.rows; i++)
			tf_seq_push(&it->id, v[i]);
	} else if (rec.kind == TF_REC_TREE && rec.rows == 2) {
		it->kind = TF_ITEM_TREE;
		for (uint32_t i = 0; i < rec.cols; i++) {
			tf_seq_push(&it->id, v[i]);
			tf_seq_push(&it->parent, v[rec.cols + i]);
		}
	} else {
		rc = tf_err("'%s': record %ld is %s (need ids, 1 value a row, or a tree, 2 rows)", r->name, r->where,
			    rec.kind == TF_REC_LOGITS ? "a logits record" : "of the wrong shape");
	}
	tf_rec_free(&rec);
	return rc;
}

/* the checks every item gets, whichever form it came in */
static int check(const tf_items_reader *r, const tf_item *it, long vocab)
{
	const char *unit = r->binary ? "record" : "line";

	for (size_t i = 0; i < it->id.n; i++)
		if (it->id.ids[i] < 0 || it->id.ids[i] >= vocab)
			return tf_err("'%s' %s %ld: %s %zu: id %d is out of range (vocab_size %ld)", r->name, unit,
				      r->where, it->kind == TF_ITEM_TREE ? "node" : "position", i, it->id.ids[i],
				      vocab);
	if (it->kind == TF_ITEM_PROMPT)
		return 0;
	if (!r->prompts)
		return tf_err("'%s' %s %ld: a tree before any prompt (an empty line is an empty prompt)", r->name,
			      unit, r->where);
	tf_tree t = { (int64_t)it->id.n, it->id.ids, it->parent.ids };
	tf_tree_shape sh;
	if (tf_tree_shape_of(&t, &sh) < 0)
		return tf_errpre("'%s' %s %ld", r->name, unit, r->where);
	tf_tree_shape_free(&sh);
	return 0;
}

int tf_items_next(tf_items_reader *r, tf_item *it, long vocab)
{
	int rc;

	it->id.n = it->parent.n = 0;
	if (r->binary < 0) {
		int c = getc(r->f);
		if (c == EOF)
			return ferror(r->f) ? tf_err("cannot read '%s':", r->name) : 0;
		ungetc(c, r->f);
		r->binary = c == 0x89;
	}
	rc = r->binary ? next_binary(r, it) : next_text(r, it, vocab);
	if (rc <= 0)
		return rc;
	it->where = r->where;
	if (check(r, it, vocab) < 0)
		return -1;
	r->prompts |= it->kind == TF_ITEM_PROMPT;
	return 1;
}
