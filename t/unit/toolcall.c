/* toolcall: the tool calls in a chat reply (lib/serve/toolcall.h) and
 * their arguments (lib/serve/toolargs.h), case by case as vLLM's
 * qwen3_coder tool parser reads them: one call, several, content before
 * them, values typed by the tools' schemas (strings kept, integers,
 * numbers, booleans, JSON and Python literals converted, the text kept
 * when they are not what the type says), parameters the schema does not
 * name, nested JSON, malformed and unclosed calls, near misses that are
 * text. Every case is fed whole, in two pieces cut at every byte, in
 * three cut at every pair of bytes and a byte at a time, and must come
 * out the same every way. Then Python literals on their own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/toolargs.h"
#include "serve/toolcall.h"
#include "tap.h"

static const char tools_json[] =
	"[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\","
	" \"properties\": {\"city\": {\"type\": \"string\"}, \"days\": {\"type\": \"integer\"},"
	" \"temp\": {\"type\": \"number\"}, \"metric\": {\"type\": \"boolean\"}, \"opts\": {\"type\": \"object\"},"
	" \"tags\": {\"type\": \"array\"}, \"note\": {\"anyOf\": [{\"type\": \"string\"}, {\"type\": \"null\"}]},"
	" \"count\": {\"anyOf\": [{\"type\": \"null\"}, {\"type\": \"integer\"}]}, \"when\": {\"type\": \"date\"},"
	" \"kinds\": {\"type\": [\"string\", \"null\"]}, \"code\": {\"type\": \"string\"}, \"n\": {\"type\": \"uint32\"},"
	" \"f\": {\"type\": \" Float \"}, \"d\": {\"type\": \"dict\"}, \"plain\": {\"description\": \"no type\"}}}}},"
	" {\"type\": \"function\", \"function\": {\"name\": \"bare\", \"parameters\": {\"days\": {\"type\": \"integer\"}}}}]";

#define CALL(name, args) name "\x1f" args
#define MAXC 4

struct tcase {
	const char *name;
	int tools;              /* the request has tools_json (else none) */
	const char *reply;
	const char *content;    /* what comes out */
	int ncalls;
	const char *calls[MAXC]; /* name \x1f arguments */
};

#define TC "<tool_call>\n<function="
#define P(k, v) "<parameter=" k ">\n" v "\n</parameter>\n"
#define END "</function>\n</tool_call>"

static const struct tcase cases[] = {
	{ "one call", 1, TC "get_weather>\n" P("city", "Paris") END, "", 1,
	  { CALL("get_weather", "{\"city\": \"Paris\"}") } },
	{ "several calls", 1, TC "get_weather>\n" P("city", "Paris") END "\n" TC "get_weather>\n" P("city", "Rome") END
	  "\n" TC "other>\n" P("x", "1") END,
	  "", 3,
	  { CALL("get_weather", "{\"city\": \"Paris\"}"), CALL("get_weather", "{\"city\": \"Rome\"}"),
	    CALL("other", "{\"x\": \"1\"}") } },
	{ "content before the calls kept as it is", 1, "Let me look.\n\n" TC "get_weather>\n" P("city", "Oslo") END,
	  "Let me look.\n\n", 1, { CALL("get_weather", "{\"city\": \"Oslo\"}") } },
	{ "no call: all content", 1, "Good morrow, cousin.", "Good morrow, cousin.", 0, { 0 } },
	{ "an empty reply", 1, "", "", 0, { 0 } },
	{ "integers, numbers, booleans by the schema", 1,
	  TC "get_weather>\n" P("days", "3") P("temp", "21.5") P("metric", "True") P("n", " 1_000 ") P("f", "20.0") END,
	  "", 1,
	  { CALL("get_weather", "{\"days\": 3, \"temp\": 21.5, \"metric\": true, \"n\": 1000, \"f\": 20}") } },
	{ "numbers as Python reads them", 1,
	  TC "get_weather>\n" P("temp", "1e20") P("f", "-0.0") P("days", "-007") P("n", "+0") P("tags", "x") END, "",
	  1,
	  { CALL("get_weather",
		 "{\"temp\": 100000000000000000000, \"f\": 0, \"days\": -7, \"n\": 0, \"tags\": \"x\"}") } },
	{ "a float in its shortest form", 1, TC "get_weather>\n" P("temp", "1.5e-7") P("f", ".25") END, "", 1,
	  { CALL("get_weather", "{\"temp\": 1.5e-07, \"f\": 0.25}") } },
	{ "values that are not their type stay text", 1,
	  TC "get_weather>\n" P("days", "three") P("temp", "inf") P("f", "nan") P("n", "0x10") P("opts", "not json")
		  END,
	  "", 1,
	  { CALL("get_weather",
		 "{\"days\": \"three\", \"temp\": \"inf\", \"f\": \"nan\", \"n\": \"0x10\", \"opts\": \"not json\"}") } },
	{ "a boolean that is not true is false", 1, TC "get_weather>\n" P("metric", "yes") END, "", 1,
	  { CALL("get_weather", "{\"metric\": false}") } },
	{ "null: for non-strings and nullable strings", 1,
	  TC "get_weather>\n" P("days", "null") P("city", "null") P("note", "None") P("count", "NULL") P("metric",
										 "none") END,
	  "", 1,
	  { CALL("get_weather",
		 "{\"days\": null, \"city\": \"null\", \"note\": null, \"count\": null, \"metric\": null}") } },
	{ "anyOf takes its first type that is not null", 1, TC "get_weather>\n" P("note", "12") P("count", "12") END,
	  "", 1, { CALL("get_weather", "{\"note\": \"12\", \"count\": 12}") } },
	{ "unknown types are Python literals, else text", 1,
	  TC "get_weather>\n" P("when", "2024") P("kinds", "'a' 'b'") P("plain", "[1]") END
		  TC "get_weather>\n" P("when", "May 3") P("kinds", "true") END,
	  "", 2,
	  { CALL("get_weather", "{\"when\": 2024, \"kinds\": \"ab\", \"plain\": \"[1]\"}"),
	    CALL("get_weather", "{\"when\": \"May 3\", \"kinds\": \"true\"}") } },
	{ "parameters the schema does not name, and no tools, stay text", 0,
	  TC "get_weather>\n" P("days", "3") P("extra", "[1, 2]") END, "", 1,
	  { CALL("get_weather", "{\"days\": \"3\", \"extra\": \"[1, 2]\"}") } },
	{ "a tool the request did not give: text", 1, TC "nope>\n" P("days", "3") END, "", 1,
	  { CALL("nope", "{\"days\": \"3\"}") } },
	{ "parameters without properties are the schema itself", 1, TC "bare>\n" P("days", "3") END, "", 1,
	  { CALL("bare", "{\"days\": 3}") } },
	{ "nested JSON objects and arrays", 1,
	  TC "get_weather>\n" P("opts", "{\"a\": {\"b\": [1, 2.5, null, true]},\n \"c\": \"\xc3\xa9\"}") P("tags",
												    "[\"x\",\"y\"]")
		  P("d", "{\"k\":[]}") END,
	  "", 1,
	  { CALL("get_weather", "{\"opts\": {\"a\": {\"b\": [1, 2.5, null, true]}, \"c\": \"\xc3\xa9\"}, \"tags\": "
				"[\"x\", \"y\"], \"d\": {\"k\": []}}") } },
	{ "containers as Python literals", 1,
	  TC "get_weather>\n" P("tags", "['x', (1, 2.0), None]") P("opts", "{'k': 'v', 1: False}") P("d",
												 "\"{'k': 1}\"") END,
	  "", 1,
	  { CALL("get_weather",
		 "{\"tags\": [\"x\", [1, 2.0], null], \"opts\": {\"k\": \"v\", \"1\": false}, \"d\": {\"k\": 1}}") } },
	{ "a set and a broken list stay text", 1, TC "get_weather>\n" P("tags", "{1, 2}") P("opts", "[1, 2") END, "",
	  1, { CALL("get_weather", "{\"tags\": \"{1, 2}\", \"opts\": \"[1, 2\"}") } },
	{ "one newline each side dropped, the rest kept", 1,
	  TC "get_weather>\n<parameter=code>\n\nline 1\n  line 2\n\n</parameter>\n" END, "", 1,
	  { CALL("get_weather", "{\"code\": \"\\nline 1\\n  line 2\\n\"}") } },
	{ "quotes, backslashes, tags and UTF-8 in a value", 1,
	  TC "get_weather>\n" P("code", "say \"a\\b\" <b>\t\xe2\x82\xac") END, "", 1,
	  { CALL("get_weather", "{\"code\": \"say \\\"a\\\\b\\\" <b>\\t\xe2\x82\xac\"}") } },
	{ "a missing </parameter> ends at the next parameter", 1,
	  TC "get_weather>\n<parameter=city>\nParis\n<parameter=days>\n2\n</function>", "", 1,
	  { CALL("get_weather", "{\"city\": \"Paris\", \"days\": 2}") } },
	{ "a parameter again takes the old one's place", 1,
	  TC "get_weather>\n" P("city", "A") P("days", "1") P("city", "B") END, "", 1,
	  { CALL("get_weather", "{\"city\": \"B\", \"days\": 1}") } },
	{ "a key that never closes ends the parameters", 1, TC "f>\n" P("a", "1") "<parameter=b\n2</parameter>\n" END,
	  "", 1, { CALL("f", "{\"a\": \"1\"}") } },
	{ "no parameters: {}", 1, TC "ping>\n" END, "", 1, { CALL("ping", "{}") } },
	{ "</tool_call> ends a call that lacks </function>", 1, TC "f>\n" P("a", "x") "</tool_call>", "", 1,
	  { CALL("f", "{\"a\": \"x\"}") } },
	{ "blanks between the tags", 1, "<tool_call> \n\n\t<function=f>\n</function></tool_call>", "", 1,
	  { CALL("f", "{}") } },
	{ "text between and after calls goes", 1, "A\n" TC "f>\n" END "\nand then\n" TC "g>\n" END "\nDone.", "A\n", 2,
	  { CALL("f", "{}"), CALL("g", "{}") } },
	{ "an unclosed call is content", 1, "Hi <tool_call>\n<function=f>\n<parameter=a>\n1",
	  "Hi <tool_call>\n<function=f>\n<parameter=a>\n1", 0, { 0 } },
	{ "a call, then an unclosed one: the call, and the rest as content", 1,
	  "A" TC "f>\n" END "\n" TC "g>\n<para", "A<tool_call>\n<function=g>\n<para", 1, { CALL("f", "{}") } },
	{ "a name that is no name: no call", 1, "x" TC "a b>\n" END, "x", 0, { 0 } },
	{ "a name without its >: no call", 1, TC "ab" END, "", 0, { 0 } },
	{ "a bad call among good ones goes alone", 1, TC "{{ name }}>\n" END TC "g>\n" END, "", 1, { CALL("g", "{}") } },
	{ "a tool call named, not made, is text", 1, "say <tool_call> in words", "say <tool_call> in words", 0, { 0 } },
	{ "<function without = is text", 1, "<tool_call>\n<functionary>\n</function>", "<tool_call>\n<functionary>\n</function>",
	  0, { 0 } },
	{ "a tag cut off at the end is content", 1, "x <tool_call>\n<func", "x <tool_call>\n<func", 0, { 0 } },
	{ "near misses are text", 1, "a <b> < <tool <tool_cal> <<tool_call>x", "a <b> < <tool <tool_cal> <<tool_call>x", 0,
	  { 0 } },
	{ "<<tool_call>: the second < begins the call", 1, "<<tool_call>\n<function=f>\n</function>", "<", 1,
	  { CALL("f", "{}") } },
};

static int same(const tf_sbuf *b, const char *s)
{
	return b->len == strlen(s) && !memcmp(b->s ? b->s : "", s, b->len);
}

/* the reply fed in the pieces cut at cuts[0..ncut) (increasing) */
static int split(const struct tcase *c, const json_t *tools, const size_t *cuts, int ncut)
{
	size_t n = strlen(c->reply), from = 0;
	tf_toolcall t;
	tf_sbuf content = { 0 };

	tf_toolcall_init(&t, c->tools ? tools : NULL);
	for (int i = 0; i <= ncut; i++) {
		size_t to = i < ncut ? cuts[i] : n;
		tf_toolcall_push(&t, c->reply + from, to - from);
		from = to;
		/* content is taken as it comes, as events take it */
		tf_sbuf_add(&content, t.content.s ? t.content.s : "", t.content.len);
		t.content.len = 0;
	}
	tf_toolcall_end(&t);
	tf_sbuf_add(&content, t.content.s ? t.content.s : "", t.content.len);
	int good = same(&content, c->content) && t.ncalls == c->ncalls;
	for (int i = 0; good && i < t.ncalls; i++) {
		char want[2048];
		snprintf(want, sizeof want, "%s\x1f%s", t.calls[i].name, t.calls[i].arguments);
		good = !strcmp(want, c->calls[i]) && !strncmp(t.calls[i].id, "call_", 5) && strlen(t.calls[i].id) == 29;
	}
	if (!good && !getenv("TOOLCALL_QUIET")) {
		diag("%s: content '%s', %d calls", c->name, content.s ? content.s : "", t.ncalls);
		for (int i = 0; i < t.ncalls; i++)
			diag("  %s %s %s", t.calls[i].id, t.calls[i].name, t.calls[i].arguments);
	}
	tf_toolcall_free(&t);
	tf_sbuf_free(&content);
	return good;
}

static void one_case(const struct tcase *c, const json_t *tools)
{
	size_t n = strlen(c->reply), cuts[4096];
	int bad = 0;

	ok(split(c, tools, NULL, 0), "%s: whole", c->name);
	for (size_t i = 0; i <= n && !bad; i++)
		bad = !split(c, tools, (size_t[]){ i }, 1);
	ok(!bad, "%s: in two pieces, cut at each of %zu places", c->name, n + 1);
	for (size_t i = 0; i <= n && !bad; i += 1)
		for (size_t j = i; j <= n && !bad; j++)
			bad = !split(c, tools, (size_t[]){ i, j }, 2);
	ok(!bad, "%s: in three pieces, every pair of cuts", c->name);
	for (size_t i = 0; i < n; i++)
		cuts[i] = i + 1;
	ok(split(c, tools, cuts, n ? (int)n - 1 : 0), "%s: a byte at a time", c->name);
}

/* a Python literal's JSON (compact), or "-" when it is none */
static int literal(const char *s, const char *want)
{
	json_t *v = tf_py_literal(s, strlen(s));
	char *got = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : strdup("-");
	int good = !strcmp(got, want);
	if (!good)
		diag("'%s': %s, not %s", s, got, want);
	free(got);
	json_decref(v);
	return good;
}

int main(void)
{
	int ncases = (int)(sizeof cases / sizeof *cases);
	json_t *tools = json_loads(tools_json, 0, NULL);

	plan(4 * ncases + 6);
	if (!tools)
		diag("the tools do not parse");
	for (int i = 0; i < ncases; i++)
		one_case(&cases[i], tools);

	/* a call goes out once its end is in, not later */
	tf_toolcall t;
	static const char r[] = "Hi" TC "f>\n" P("a", "1") END;
	size_t at = strstr(r, "</function>") - r + strlen("</function>");
	tf_toolcall_init(&t, tools);
	tf_toolcall_push(&t, r, at - 1);
	int before = t.ncalls;
	tf_toolcall_push(&t, r + at - 1, 1);
	ok(before == 0 && t.ncalls == 1 && same(&t.content, "Hi"), "a call is out once its </function> is in");
	tf_toolcall_free(&t);

	ok(literal("1", "1") && literal(" -2 ", "-2") && literal("1_000", "1000") && literal("0x1f", "31") &&
		   literal("2.5", "2.5") && literal("1e3", "1000.0") && literal("007", "-") && literal("1j", "-") &&
		   literal("abc", "-") && literal("", "-"),
	   "Python literals: numbers");
	ok(literal("'a\\n\\'b'", "\"a\\n'b\"") && literal("\"x\" 'y'", "\"xy\"") && literal("'\\u00e9\\x41'", "\"\xc3\xa9" "A\"") &&
		   literal("'open", "-") && literal("'\\d'", "\"\\\\d\""),
	   "Python literals: strings");
	ok(literal("True", "true") && literal("None", "null") && literal("Truer", "-") && literal("[1, (2,), ()]", "[1,[2],[]]") &&
		   literal("(1)", "1") && literal("1, 2", "[1,2]") && literal("{'a': [1,], None: 2}", "{\"a\":[1],\"null\":2}") &&
		   literal("{(1, 2): 3}", "-") && literal("{1, 2}", "-") && literal("[1 2]", "-"),
	   "Python literals: constants and containers");
	char deep[300], parens[300];
	memset(deep, '[', 200);
	deep[200] = 0;
	/* 60 parentheses around a name: read once each, not tried two ways
	 * at every level (2^60 tries) */
	memset(parens, '(', 60);
	strcpy(parens + 60, "x");
	ok(literal(deep, "-") && literal(parens, "-"), "Python literals: nesting past 64 is refused, not followed");
	memset(parens, '(', 60);
	strcpy(parens + 60, "1,");
	memset(parens + 62, ')', 60);
	parens[122] = 0;
	ok(literal(parens, "[1]"), "Python literals: parentheses around a tuple are the tuple");
	json_decref(tools);
	return done();
}
