/* fuzz-toolcall.c: a chat reply's tool calls (lib/serve/toolcall.h) and
 * their parameters' values (toolargs.h), read from model output. The
 * first byte is where the reply is cut in two, so the pieces are tried
 * as streaming cuts them; the calls must come out as they do from the
 * whole reply, and every value's JSON must read back. The reply is made
 * valid UTF-8 first, as tf-serve's text is (text.h) */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "serve/toolargs.h"
#include "serve/text.h"
#include "serve/toolcall.h"

/* one parameter of each kind the schema can give */
static const char tools_json[] =
	"[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"properties\": {"
	"\"s\": {\"type\": \"string\"}, \"i\": {\"type\": \"integer\"}, \"n\": {\"type\": \"number\"},"
	" \"b\": {\"type\": \"boolean\"}, \"o\": {\"type\": \"object\"}, \"a\": {\"type\": \"array\"},"
	" \"u\": {\"type\": \"date\"}, \"z\": {\"anyOf\": [{\"type\": \"null\"}, {\"type\": \"integer\"}]}}}}}]";

static void run(const json_t *tools, const char *s, size_t n, size_t cut, tf_toolcall *t, tf_sbuf *content)
{
	tf_toolcall_init(t, tools);
	tf_toolcall_push(t, s, cut);
	tf_sbuf_add(content, t->content.s ? t->content.s : "", t->content.len);
	t->content.len = 0;
	tf_toolcall_push(t, s + cut, n - cut);
	tf_toolcall_end(t);
	tf_sbuf_add(content, t->content.s ? t->content.s : "", t->content.len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_t *tools;
	tf_toolcall a, b;
	tf_sbuf ca = { 0 }, cb = { 0 };

	if (!size)
		return 0;
	if (!tools)
		tools = json_loads(tools_json, 0, NULL);
	size_t n;
	char *s = tf_utf8_clean((const char *)data + 1, size - 1, &n);
	size_t cut = n ? data[0] % (n + 1) : 0;
	run(tools, s, n, n, &a, &ca);
	run(tools, s, n, cut, &b, &cb);
	if (a.ncalls != b.ncalls || ca.len != cb.len || memcmp(ca.s ? ca.s : "", cb.s ? cb.s : "", ca.len))
		abort();
	for (int i = 0; i < a.ncalls; i++) {
		if (strcmp(a.calls[i].name, b.calls[i].name) || strcmp(a.calls[i].arguments, b.calls[i].arguments))
			abort();
		/* the arguments are JSON (an integer may have more digits than
		 * jansson reads: Python's int, and JSON, have no bound) */
		json_error_t e;
		json_t *v = json_loads(a.calls[i].arguments, JSON_ALLOW_NUL, &e);
		if (!json_is_object(v) && !(!v && (strstr(e.text, "too big") || strstr(e.text, "overflow"))))
			abort();
		json_decref(v);
	}
	tf_toolcall_free(&a);
	tf_toolcall_free(&b);
	tf_sbuf_free(&ca);
	tf_sbuf_free(&cb);
	json_decref(tf_py_literal(s, n));
	free(s);
	return 0;
}
