/* toolargs.c: a tool call's parameters to its arguments' JSON (toolargs.h) */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/err.h"
#include "pyjson.h"
#include "toolargs.h"

#define LEN(s) (sizeof(s) - 1)

static const char param_tag[] = "<parameter=", param_end[] = "</parameter>";

static int space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* s[0..n) equals word, ASCII case aside */
static int is_word(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && !strncasecmp(s, word, n);
}

static const char *find(const char *s, size_t n, const char *t, size_t tn)
{
	return memmem(s, n, t, tn);
}

/* ---------------------------------------------------------------------
 * Python literals (ast.literal_eval), as JSON values */

typedef struct {
	const char *s, *end;
	int depth;
} reader;

static json_t *lit_value(reader *r);

static void skip_space(reader *r)
{
	while (r->s < r->end && space(*r->s))
		r->s++;
}

/* n hex digits at r->s, or -1 */
static long hex_digits(reader *r, int n)
{
	long v = 0;

	if (r->end - r->s < n)
		return -1;
	for (int i = 0; i < n; i++) {
		char c = r->s[i];
		if (!isxdigit((unsigned char)c))
			return -1;
		v = v * 16 + (isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10);
	}
	r->s += n;
	return v;
}

static void add_utf8(tf_sbuf *b, long c)
{
	char u[4];
	int n;

	if (c < 0x80) {
		u[0] = (char)c, n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | c >> 6), u[1] = (char)(0x80 | (c & 0x3f)), n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | c >> 12), u[1] = (char)(0x80 | (c >> 6 & 0x3f)), u[2] = (char)(0x80 | (c & 0x3f)), n = 3;
	} else {
		u[0] = (char)(0xf0 | c >> 18), u[1] = (char)(0x80 | (c >> 12 & 0x3f)), u[2] = (char)(0x80 | (c >> 6 & 0x3f));
		u[3] = (char)(0x80 | (c & 0x3f)), n = 4;
	}
	tf_sbuf_add(b, u, n);
}

/* one quoted string (no prefix, no triple quotes) into b; -1 when it is
 * not one */
static int lit_string(reader *r, tf_sbuf *b)
{
	char q = *r->s++;

	while (r->s < r->end && *r->s != q) {
		char c = *r->s++;
		if (c == '\n')
			return -1;
		if (c != '\\') {
			tf_sbuf_add(b, &c, 1);
			continue;
		}
		if (r->s == r->end)
			return -1;
		c = *r->s++;
		long u;
		switch (c) {
		case '\n': break;
		case '\\': case '\'': case '"': tf_sbuf_add(b, &c, 1); break;
		case 'n': tf_sbuf_puts(b, "\n"); break;
		case 't': tf_sbuf_puts(b, "\t"); break;
		case 'r': tf_sbuf_puts(b, "\r"); break;
		case 'b': tf_sbuf_puts(b, "\b"); break;
		case 'f': tf_sbuf_puts(b, "\f"); break;
		case 'v': tf_sbuf_puts(b, "\v"); break;
		case 'a': tf_sbuf_puts(b, "\a"); break;
		case 'x': case 'u': case 'U':
			u = hex_digits(r, c == 'x' ? 2 : c == 'u' ? 4 : 8);
			/* a lone surrogate cannot be UTF-8 */
			if (u < 0 || u > 0x10ffff || (u >= 0xd800 && u < 0xe000))
				return -1;
			add_utf8(b, u);
			break;
		default:
			if (c >= '0' && c <= '7') {
				u = c - '0';
				for (int k = 0; k < 2 && r->s < r->end && *r->s >= '0' && *r->s <= '7'; k++)
					u = u * 8 + (*r->s++ - '0');
				add_utf8(b, u);
			} else {
				/* an unknown escape keeps its backslash */
				tf_sbuf_puts(b, "\\");
				tf_sbuf_add(b, &c, 1);
			}
		}
	}
	if (r->s == r->end)
		return -1;
	r->s++;
	return 0;
}

/* strings side by side are one, as in Python */
static json_t *lit_strings(reader *r)
{
	tf_sbuf b = { 0 };

	do {
		if (lit_string(r, &b) < 0) {
			tf_sbuf_free(&b);
			return NULL;
		}
		skip_space(r);
	} while (r->s < r->end && (*r->s == '\'' || *r->s == '"'));
	json_t *v = json_stringn_nocheck(b.s ? b.s : "", b.len);
	tf_sbuf_free(&b);
	return v;
}

/* a number, its sign included: Python's int and float literals */
static json_t *lit_number(reader *r)
{
	char buf[128];
	size_t k = 0;
	int neg = 0, real = 0;

	while (r->s < r->end && (*r->s == '-' || *r->s == '+')) {
		neg ^= *r->s == '-';
		r->s++;
		skip_space(r);
	}
	const char *p = r->s;
	if (r->end - p > 2 && p[0] == '0' && strchr("xXoObB", p[1])) {
		int base = tolower((unsigned char)p[1]) == 'x' ? 16 : tolower((unsigned char)p[1]) == 'o' ? 8 : 2;
		long long v = 0;
		p += 2;
		int digits = 0;
		for (; p < r->end && (isalnum((unsigned char)*p) || *p == '_'); p++) {
			if (*p == '_')
				continue;
			int d = isdigit((unsigned char)*p) ? *p - '0' : tolower((unsigned char)*p) - 'a' + 10;
			if (d >= base || v > (LLONG_MAX - d) / base)
				return NULL;
			v = v * base + d;
			digits++;
		}
		r->s = p;
		return digits ? json_integer(neg ? -v : v) : NULL;
	}
	for (; p < r->end && k + 1 < sizeof buf; p++) {
		char c = *p;
		if (isdigit((unsigned char)c)) {
			buf[k++] = c;
		} else if (c == '_' && k && isdigit((unsigned char)buf[k - 1]) && p + 1 < r->end &&
			   isdigit((unsigned char)p[1])) {
			continue;
		} else if (c == '.' || c == 'e' || c == 'E') {
			real = 1;
			buf[k++] = c;
		} else if ((c == '-' || c == '+') && k && (buf[k - 1] == 'e' || buf[k - 1] == 'E')) {
			buf[k++] = c;
		} else {
			break;
		}
	}
	buf[k] = 0;
	r->s = p;
	if (!k || (k == 1 && buf[0] == '.'))
		return NULL;
	char *e;
	if (real) {
		double x = strtod(buf, &e);
		return *e ? NULL : json_real(neg ? -x : x);
	}
	/* Python refuses leading zeros in a decimal integer ("007") */
	if (buf[0] == '0' && strspn(buf, "0") != k)
		return NULL;
	errno = 0;
	long long v = strtoll(buf, &e, 10);
	if (*e || errno)
		return NULL;
	return json_integer(neg ? -v : v);
}

/* a dict key as json.dumps writes it: strings, numbers, True, False
 * and None become strings */
static char *key_text(const json_t *k)
{
	if (json_is_string(k))
		return tf_strdup(json_string_value(k));
	if (!json_is_number(k) && !json_is_boolean(k) && !json_is_null(k))
		return NULL;
	tf_sbuf b = { 0 };
	tf_py_dumps(&b, k);
	return b.s;
}

/* items up to the closing bracket; dict: key: value pairs */
static json_t *lit_items(reader *r, char close, int dict)
{
	json_t *v = dict ? json_object() : json_array();

	if (++r->depth > 64)
		goto bad;
	for (;;) {
		skip_space(r);
		if (r->s < r->end && *r->s == close)
			break;
		json_t *x = lit_value(r);
		if (!x)
			goto bad;
		if (dict) {
			char *k = key_text(x);
			json_decref(x);
			skip_space(r);
			if (!k || r->s == r->end || *r->s != ':') {
				free(k);
				goto bad;
			}
			r->s++;
			x = lit_value(r);
			if (!x) {
				free(k);
				goto bad;
			}
			json_object_set_new_nocheck(v, k, x);
			free(k);
		} else {
			json_array_append_new(v, x);
		}
		skip_space(r);
		if (r->s < r->end && *r->s == ',') {
			r->s++;
			continue;
		}
		if (r->s < r->end && *r->s == close)
			break;
		goto bad;
	}
	r->s++;
	r->depth--;
	return v;
bad:
	json_decref(v);
	return NULL;
}

static json_t *lit_value(reader *r)
{
	skip_space(r);
	if (r->s == r->end)
		return NULL;
	char c = *r->s;
	if (c == '\'' || c == '"')
		return lit_strings(r);
	if (c == '[' || c == '{') {
		r->s++;
		return lit_items(r, c == '[' ? ']' : '}', c == '{');
	}
	if (c == '(') {
		/* "(x)" is x; "()" and "(x, ...)" a tuple, an array. The first
		 * item is read once, whichever it is, so nesting costs no more
		 * than its length */
		r->s++;
		if (++r->depth > 64)
			return NULL;
		skip_space(r);
		if (r->s < r->end && *r->s == ')') {
			r->s++;
			r->depth--;
			return json_array();
		}
		json_t *x = lit_value(r);
		if (!x)
			return NULL;
		skip_space(r);
		if (r->s < r->end && *r->s == ')') {
			r->s++;
			r->depth--;
			return x;
		}
		json_t *t = NULL;
		if (r->s < r->end && *r->s == ',') {
			r->s++;
			t = lit_items(r, ')', 0);
		}
		if (!t) {
			json_decref(x);
			return NULL;
		}
		json_array_insert_new(t, 0, x);
		r->depth--;
		return t;
	}
	static const struct {
		const char *word;
		int kind;
	} words[] = { { "True", JSON_TRUE }, { "False", JSON_FALSE }, { "None", JSON_NULL } };
	for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
		size_t k = strlen(words[i].word);
		if ((size_t)(r->end - r->s) >= k && !memcmp(r->s, words[i].word, k) &&
		    ((size_t)(r->end - r->s) == k || !(isalnum((unsigned char)r->s[k]) || r->s[k] == '_'))) {
			r->s += k;
			return words[i].kind == JSON_TRUE ? json_true() : words[i].kind == JSON_FALSE ? json_false() : json_null();
		}
	}
	if (c == '-' || c == '+' || c == '.' || isdigit((unsigned char)c)) {
		json_t *x = lit_number(r);
		/* a name or a complex number right after the digits is no literal */
		if (x && r->s < r->end && (isalnum((unsigned char)*r->s) || *r->s == '_' || *r->s == '.')) {
			json_decref(x);
			return NULL;
		}
		return x;
	}
	return NULL;
}

json_t *tf_py_literal(const char *s, size_t n)
{
	reader r = { s, s + n, 0 };
	json_t *v = lit_value(&r);

	skip_space(&r);
	if (v && r.s < r.end && *r.s == ',') {
		/* "1, 2" is a tuple in Python's eval mode */
		json_t *t = json_array();
		json_array_append_new(t, v);
		for (;;) {
			r.s++;
			skip_space(&r);
			if (r.s == r.end)
				return t;
			if (!(v = lit_value(&r))) {
				json_decref(t);
				return NULL;
			}
			json_array_append_new(t, v);
			skip_space(&r);
			if (r.s == r.end)
				return t;
			if (*r.s != ',') {
				json_decref(t);
				return NULL;
			}
		}
	}
	if (!v || r.s != r.end) {
		json_decref(v);
		return NULL;
	}
	return v;
}

/* ---------------------------------------------------------------------
 * the schema's types */

/* the properties of function name in tools, as vLLM finds them:
 * parameters.properties, or parameters itself when it has none */
static const json_t *properties(const json_t *tools, const char *name)
{
	size_t i;
	const json_t *t;

	json_array_foreach(tools, i, t) {
		const json_t *f = json_object_get(t, "function"), *type = json_object_get(t, "type");
		const json_t *fn = json_object_get(f, "name");
		if (!json_is_string(type) || strcmp(json_string_value(type), "function") || !json_is_string(fn) ||
		    strcmp(json_string_value(fn), name))
			continue;
		const json_t *p = json_object_get(f, "parameters");
		if (!json_is_object(p))
			return NULL;
		const json_t *props = json_object_get(p, "properties");
		if (props)
			return json_is_object(props) ? props : NULL;
		return p;
	}
	return NULL;
}

/* a schema type as vLLM compares it: str(type).strip().lower(); a type
 * that is not a string (a list of types) matches no name, so it is "?" */
static void type_name(const json_t *t, char *out, size_t cap)
{
	if (!json_is_string(t)) {
		snprintf(out, cap, "?");
		return;
	}
	const char *s = json_string_value(t);
	size_t n = json_string_length(t);
	while (n && space(*s))
		s++, n--;
	while (n && space(s[n - 1]))
		n--;
	size_t k = 0;
	for (; k < n && k + 1 < cap; k++)
		out[k] = (char)tolower((unsigned char)s[k]);
	out[k] = 0;
}

static int starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static int one_of(const char *s, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(s, *names))
			return 1;
	return 0;
}

/* Python's int(): blanks around, a sign, digits with single underscores
 * between them, into canonical digits; -1 when it is not one */
static int py_int(tf_sbuf *out, const char *s, size_t n)
{
	while (n && space(*s))
		s++, n--;
	while (n && space(s[n - 1]))
		n--;
	int neg = 0;
	if (n && (*s == '-' || *s == '+')) {
		neg = *s == '-';
		s++, n--;
	}
	if (!n || !isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[n - 1]))
		return -1;
	tf_sbuf d = { 0 };
	for (size_t i = 0; i < n; i++) {
		if (isdigit((unsigned char)s[i]))
			tf_sbuf_add(&d, s + i, 1);
		else if (!(s[i] == '_' && isdigit((unsigned char)s[i + 1]) && isdigit((unsigned char)s[i - 1]))) {
			tf_sbuf_free(&d);
			return -1;
		}
	}
	size_t z = 0;
	while (z + 1 < d.len && d.s[z] == '0')
		z++;
	if (neg && !(d.len - z == 1 && d.s[z] == '0'))
		tf_sbuf_puts(out, "-");
	/* digits as they are: Python's int has no bound */
	tf_sbuf_add(out, d.s + z, d.len - z);
	tf_sbuf_free(&d);
	return 0;
}

/* Python's float(), then int() when whole, as vLLM writes it; -1 when it
 * is not a number, or is inf or nan */
static int py_number(tf_sbuf *out, const char *s, size_t n)
{
	char buf[400];
	size_t k = 0;

	while (n && space(*s))
		s++, n--;
	while (n && space(s[n - 1]))
		n--;
	/* sign, digits [. digits] or . digits, [e sign digits], underscores
	 * only between digits */
	size_t i = 0, digits = 0;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		buf[k++] = s[i++];
	for (int part = 0; part < 3 && k + 1 < sizeof buf; part++) {
		if (part == 1) {
			if (i >= n || s[i] != '.')
				continue;
			buf[k++] = s[i++];
		}
		if (part == 2) {
			if (i >= n || (s[i] != 'e' && s[i] != 'E') || !digits)
				break;
			buf[k++] = s[i++];
			if (i < n && (s[i] == '-' || s[i] == '+'))
				buf[k++] = s[i++];
			if (i >= n || !isdigit((unsigned char)s[i]))
				return -1;
		}
		for (; i < n && k + 1 < sizeof buf; i++) {
			if (isdigit((unsigned char)s[i])) {
				buf[k++] = s[i];
				if (part < 2)
					digits++;
			} else if (s[i] == '_' && i && isdigit((unsigned char)s[i - 1]) && i + 1 < n &&
				   isdigit((unsigned char)s[i + 1])) {
				continue;
			} else {
				break;
			}
		}
	}
	buf[k] = 0;
	if (i != n || !digits)
		return -1;
	double x = strtod(buf, NULL);
	if (!isfinite(x))
		return -1;
	if (x == trunc(x))
		/* the double's exact whole value, as Python's int() of it */
		tf_sbuf_printf(out, "%.0f", x == 0 ? 0.0 : x);
	else {
		json_t *v = json_real(x);
		tf_py_dumps(out, v);
		json_decref(v);
	}
	return 0;
}

static void add_json(tf_sbuf *out, json_t *v)
{
	tf_py_dumps(out, v);
	json_decref(v);
}

static void add_text(tf_sbuf *out, const char *s, size_t n)
{
	add_json(out, json_stringn_nocheck(s, n));
}

/* one parameter's value as JSON text, by its schema (toolargs.h's table) */
static void value(tf_sbuf *out, const json_t *props, const char *fname, const char *key, const char *v, size_t n)
{
	static const char *const strings[] = { "string", "str", "text", "varchar", "char", "enum", NULL };
	static const char *const bools[] = { "boolean", "bool", "binary", NULL };
	static const char *const containers[] = { "object", "array", "arr", NULL };
	const json_t *cfg = props ? json_object_get(props, key) : NULL;
	char type[64] = "string";
	int nullable = 0;

	(void)fname;
	if (!cfg) {
		add_text(out, v, n);
		return;
	}
	if (json_is_object(cfg) && json_object_get(cfg, "type")) {
		type_name(json_object_get(cfg, "type"), type, sizeof type);
		nullable = !strcmp(type, "null");
	} else if (json_is_object(cfg) && json_object_get(cfg, "anyOf")) {
		size_t i;
		const json_t *o;
		int picked = 0;
		char t[64];
		json_array_foreach(json_object_get(cfg, "anyOf"), i, o) {
			if (!json_is_object(o) || !json_object_get(o, "type"))
				continue;
			type_name(json_object_get(o, "type"), t, sizeof t);
			if (!strcmp(t, "null"))
				nullable = 1;
			else if (!picked) {
				snprintf(type, sizeof type, "%s", t);
				picked = 1;
			}
		}
	}
	int null_word = is_word(v, n, "null") || is_word(v, n, "none");
	if (nullable && null_word) {
		tf_sbuf_puts(out, "null");
		return;
	}
	if (one_of(type, strings)) {
		add_text(out, v, n);
		return;
	}
	if (null_word) {
		tf_sbuf_puts(out, "null");
		return;
	}
	if (starts(type, "int") || starts(type, "uint") || starts(type, "long") || starts(type, "short") ||
	    starts(type, "unsigned")) {
		if (py_int(out, v, n) < 0)
			add_text(out, v, n);
		return;
	}
	if (starts(type, "num") || starts(type, "float")) {
		if (py_number(out, v, n) < 0)
			add_text(out, v, n);
		return;
	}
	if (one_of(type, bools)) {
		tf_sbuf_puts(out, is_word(v, n, "true") ? "true" : "false");
		return;
	}
	int container = one_of(type, containers) || starts(type, "dict") || starts(type, "list");
	json_t *x;
	if (container && (x = json_loadb(v, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL))) {
		/* a JSON string holding a Python literal, as a model taught by a
		 * template that wrote str(dict) may give, is read once more */
		json_t *y;
		if (json_is_string(x) && (y = tf_py_literal(json_string_value(x), json_string_length(x)))) {
			json_decref(x);
			x = y;
		}
		add_json(out, x);
		return;
	}
	/* literal_eval drops the spaces and tabs before the text */
	while (n && (*v == ' ' || *v == '\t'))
		v++, n--;
	if ((x = tf_py_literal(v, n))) {
		json_t *y;
		if (container && json_is_string(x) && (y = tf_py_literal(json_string_value(x), json_string_length(x)))) {
			json_decref(x);
			x = y;
		}
		add_json(out, x);
		return;
	}
	add_text(out, v, n);
}

/* ---------------------------------------------------------------------
 * the parameters */

typedef struct {
	char *key;
	tf_sbuf json;
} param;

void tf_toolargs(tf_sbuf *out, const json_t *tools, const char *name, const char *body, size_t n)
{
	const json_t *props = tools ? properties(tools, name) : NULL;
	param *ps = NULL;
	size_t np = 0, pos = 0;

	for (;;) {
		const char *p = find(body + pos, n - pos, param_tag, LEN(param_tag));
		if (!p)
			break;
		size_t from = (size_t)(p - body) + LEN(param_tag), to, next;
		/* the value ends at the first "</parameter>" or before the next
		 * "<parameter=", whichever comes first, else at the body's end */
		const char *e = find(body + from, n - from, param_end, LEN(param_end));
		const char *q = find(body + from, n - from, param_tag, LEN(param_tag));
		if (e && (!q || e < q)) {
			to = (size_t)(e - body);
			next = to + LEN(param_end);
		} else if (q) {
			to = next = (size_t)(q - body);
		} else {
			to = next = n;
		}
		const char *gt = memchr(body + from, '>', to - from);
		if (!gt)
			/* a key that never closes: vLLM reads no further */
			break;
		size_t kn = (size_t)(gt - (body + from));
		const char *v = gt + 1;
		size_t vn = (size_t)(body + to - v);
		if (vn && v[0] == '\n')
			v++, vn--;
		if (vn && v[vn - 1] == '\n')
			vn--;
		char *key = tf_malloc(kn + 1);
		memcpy(key, body + from, kn);
		key[kn] = 0;
		size_t k = 0;
		while (k < np && strcmp(ps[k].key, key))
			k++;
		if (k == np) {
			ps = tf_realloc(ps, (np + 1) * sizeof *ps);
			ps[np++] = (param){ key, { 0 } };
		} else {
			/* a key again: its new value in the old one's place, as a
			 * Python dict keeps it */
			free(key);
			ps[k].json.len = 0;
		}
		value(&ps[k].json, props, name, ps[k].key, v, vn);
		pos = next;
	}
	tf_sbuf_puts(out, "{");
	for (size_t k = 0; k < np; k++) {
		if (k)
			tf_sbuf_puts(out, ", ");
		add_text(out, ps[k].key, strlen(ps[k].key));
		tf_sbuf_puts(out, ": ");
		tf_sbuf_add(out, ps[k].json.s ? ps[k].json.s : "", ps[k].json.len);
		free(ps[k].key);
		tf_sbuf_free(&ps[k].json);
	}
	tf_sbuf_puts(out, "}");
	free(ps);
}
